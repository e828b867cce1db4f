func.func @zero_program_step(%a: memref<4xf32>, %loss: memref<f32> {zrt.loss}) {
  %c = arith.constant 1 : index
  return
}
