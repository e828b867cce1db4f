func.func @forward(%x: tensor<10x3xf32>, %l: tensor<10xi32>,
                   %w: tensor<3x2xf32> {nn.param = "w"}) -> tensor<f32> {
  %0 = nn.matmul %x, %w : tensor<10x3xf32>, tensor<3x2xf32> -> tensor<10x2xf32>
  %1 = nn.softmax_cross_entropy %0, %l : tensor<10x2xf32>, tensor<10xi32> -> tensor<f32>
  return %1 : tensor<f32>
}
