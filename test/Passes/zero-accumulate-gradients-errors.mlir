// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-accumulate-gradients="micro-batches=3 mode=nearby"
// RUN: zero-opt %s --zero-accumulate-gradients="micro-batches=1 mode=nearby" | FileCheck %s --check-prefix=ONE

// expected-error @+1 {{zero-accumulate-gradients: mode must be local or sharded, got 'nearby' (zero-opt decides --accumulate=auto before the pipeline runs)}}
module {
  func.func @train_step() {
    return
  }
}

// One micro-batch: nothing is accumulated, so the mode is not read.
// ONE-LABEL: func.func @train_step
