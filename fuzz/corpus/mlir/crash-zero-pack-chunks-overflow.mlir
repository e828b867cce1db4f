func.func @f(%g1: tensor<4x5xf32>, %g2: tensor<3xf32>) -> tensor<24xf32> {
  %b = zero.pack %g1, %g2 chunks(4611686018427387904) : tensor<4x5xf32>, tensor<3xf32> -> tensor<24xf32>
  return %b : tensor<24xf32>
}
