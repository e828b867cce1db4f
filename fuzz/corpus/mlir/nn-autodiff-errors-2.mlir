func.func @forward(%x: tensor<4x4xf32>, %labels: tensor<4xi32>,
                   %w: tensor<4x4xf32> {nn.param = "w"}) -> tensor<f32> {
  %h = arith.mulf %x, %w : tensor<4x4xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
