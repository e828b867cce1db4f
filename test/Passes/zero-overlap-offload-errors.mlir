// RUN: zero-opt %s --zero-overlap-offload --verify-diagnostics

// No update runs on the host: the pass belongs to --offload=optimizer.
// expected-error @below {{zero-overlap-offload: the program has no zrt.adamw on_host to run as a host task; compile with --offload=optimizer}}
module {
  func.func @zero_program_step(%p: memref<8xf32>, %loss: memref<f32> {zrt.loss}) {
    zrt.add %p, %p -> %p : memref<8xf32>
    return
  }
}
