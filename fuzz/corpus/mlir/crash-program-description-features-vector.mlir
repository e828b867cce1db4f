func.func @forward(%x: tensor<4xf32> {nn.data = "features"}, %labels: tensor<4xi32>, %w: tensor<3x5xf32> {nn.param = "w"}, %l: tensor<4x5xf32>) -> tensor<f32> {
  %loss = nn.softmax_cross_entropy %l, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
