func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>) -> tensor<f32> {
  %loss = nn.softmax_cross_entropy %x, %labels : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
