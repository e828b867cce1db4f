func.func @linear(%x: tensor<8x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3xf32>) -> tensor<8x3xf32> {
  %h = nn.matmul %x, %w transpose_rhs : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %y = nn.bias_add %h, %b : tensor<8x3xf32>, tensor<3xf32>
  return %y : tensor<8x3xf32>
}
