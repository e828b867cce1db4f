func.func @forward(%x: tensor<4x4xf32>, %labels: tensor<4xi32>,
                   %w: tensor<4x4xf32> {nn.param = "w"},
                   %unused: tensor<4xf32> {nn.param = "unused"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %g = nn.gelu %h : tensor<4x4xf32>
  %s = nn.add %h, %g : tensor<4x4xf32>
  %loss = nn.softmax_cross_entropy %s, %labels : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
