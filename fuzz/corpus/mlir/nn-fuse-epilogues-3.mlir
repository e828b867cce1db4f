func.func @not_fused(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %h = nn.matmul %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %y = nn.bias_add %h, %b : tensor<8x4xf32>, tensor<4xf32>
  %a = nn.add %x, %x : tensor<8x4xf32>
  %ya = nn.bias_add %a, %b : tensor<8x4xf32>, tensor<4xf32>
  %h2 = nn.matmul %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %y2 = nn.bias_add %h2, %b : tensor<8x4xf32>, tensor<4xf32>
  %r = nn.relu %y2 : tensor<8x4xf32>
  return %h, %y, %ya, %r : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
