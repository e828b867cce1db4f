func.func @train_step(%x: tensor<4x3xf32>, %labels: tensor<4xi32>) -> tensor<f32> attributes {nn.seq_len = 1 : i64} {
  %loss = nn.softmax_cross_entropy %x, %labels {divisor = 8 : i64} : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  %read = nn.sum_squares %loss : tensor<f32> -> tensor<f32>
  %dx = nn.softmax_cross_entropy_grad %x, %labels, %read {divisor = 8 : i64} : tensor<4x3xf32>, tensor<4xi32>, tensor<f32>
  %s = nn.sum_squares %dx : tensor<4x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
