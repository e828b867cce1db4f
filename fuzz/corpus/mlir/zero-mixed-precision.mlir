zero.group @dp world_size(2)

func.func @forward(%x: tensor<4x3xbf16>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xbf16> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xbf16>, tensor<3x5xbf16> -> tensor<4x5xbf16>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xbf16>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
