// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-choose-accumulation="limit=lots options='stage=1 world-size=2 grad-accum=3'"
// RUN: not zero-opt %s --zero-choose-accumulation="limit=1GiB options='stage=7 grad-accum=3'" 2>&1 | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: zero-choose-accumulation: options 'stage=7 grad-accum=3' are not the stage pipeline's options

// expected-error @+1 {{zero-choose-accumulation: limit='lots' is not a byte count (like 80GiB, 40GB, 1.5e9)}}
module {
  func.func @train_step() {
    return
  }
}
