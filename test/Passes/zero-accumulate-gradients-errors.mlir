// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-accumulate-gradients="micro-batches=3 mode=nearby"
// RUN: not zero-opt %s --zero-accumulate-gradients="micro-batches=3 mode=auto" 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: zero-opt %s --zero-accumulate-gradients="micro-batches=1 mode=nearby" | FileCheck %s --check-prefix=ONE

// expected-error @+1 {{zero-accumulate-gradients: mode must be local, sharded or auto, got 'nearby'}}
module {
  func.func @train_step() {
    return
  }
}

// AUTO: zero-accumulate-gradients: mode=auto follows the module's zero.accumulate, which is missing (run zero-choose-accumulation first)

// One micro-batch: nothing is accumulated, so the mode is not read.
// ONE: func.func @train_step
