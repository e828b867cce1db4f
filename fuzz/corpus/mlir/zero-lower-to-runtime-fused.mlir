zero.group @dp world_size(1)


func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w1: tensor<3x8xf32> {nn.param = "fc1.weight"}, %b1: tensor<8xf32> {nn.param = "fc1.bias"},
                   %w2: tensor<8x5xf32> {nn.param = "fc2.weight"}, %b2: tensor<5xf32> {nn.param = "fc2.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w1 : tensor<4x3xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
  %z = nn.bias_add %h, %b1 : tensor<4x8xf32>, tensor<8xf32>
  %g = nn.gelu %z : tensor<4x8xf32>
  %o = nn.matmul %g, %w2 : tensor<4x8xf32>, tensor<8x5xf32> -> tensor<4x5xf32>
  %y = nn.bias_add %o, %b2 : tensor<4x5xf32>, tensor<5xf32>
  %loss = nn.softmax_cross_entropy %y, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
