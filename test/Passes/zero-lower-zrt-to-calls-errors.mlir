// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-lower-zrt-to-calls -o /dev/null

// The pass is mechanical: anything but zrt ops is refused, named.
func.func @zero_program_step(%a: memref<4xf32>, %loss: memref<f32> {zrt.loss}) {
  %c = arith.constant 1 : index
  // expected-error @above {{'arith.constant' op is no zrt op: zero-lower-zrt-to-calls expects functions of zrt ops only}}
  return
}
