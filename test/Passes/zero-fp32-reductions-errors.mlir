// RUN: zero-opt %s --verify-diagnostics --zero-fp32-reductions

// expected-error @+1 {{zero-fp32-reductions: expected a func.func @train_step (run zero-insert-collectives first)}}
module {
  func.func @forward() {
    return
  }
}
