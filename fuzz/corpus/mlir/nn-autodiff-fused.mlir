func.func @forward(%x: tensor<8x4xf32>, %labels: tensor<8xi32>,
                   %w1: tensor<4x16xf32> {nn.param = "fc1.weight"}, %b1: tensor<16xf32> {nn.param = "fc1.bias"},
                   %w2: tensor<3x16xf32> {nn.param = "fc2.weight"}, %b2: tensor<3xf32> {nn.param = "fc2.bias"}) -> tensor<f32> {
  %pre, %g = nn.matmul_bias_gelu %x, %w1, %b1 : tensor<8x4xf32>, tensor<4x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %logits = nn.matmul_bias %g, %w2, %b2 transpose_rhs : tensor<8x16xf32>, tensor<3x16xf32>, tensor<3xf32> -> tensor<8x3xf32>
  %loss = nn.softmax_cross_entropy %logits, %labels : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
