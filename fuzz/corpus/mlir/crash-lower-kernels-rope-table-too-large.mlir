func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>, %w: tensor<3x8589934592xf32> {nn.param = "w"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x8589934592xf32> -> tensor<4x8589934592xf32>
  %r = nn.rope %h {num_heads = 1 : i64, seq_len = 2 : i64, theta = 1.000000e+04 : f32} : tensor<4x8589934592xf32>
  %loss = nn.softmax_cross_entropy %r, %labels : tensor<4x8589934592xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
