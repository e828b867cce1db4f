func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w0: tensor<3x5xf32> {nn.param = "fc0.weight"}, %b0: tensor<5xf32> {nn.param = "fc0.bias"},
                   %w1: tensor<5x2xf32> {nn.param = "fc1.weight"}, %b1: tensor<2xf32> {nn.param = "fc1.bias"}) -> tensor<f32> {
  %0 = nn.matmul %x, %w0 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %1 = nn.bias_add %0, %b0 : tensor<4x5xf32>, tensor<5xf32>
  %2 = nn.relu %1 : tensor<4x5xf32>
  %3 = nn.matmul %2, %w1 : tensor<4x5xf32>, tensor<5x2xf32> -> tensor<4x2xf32>
  %4 = nn.bias_add %3, %b1 : tensor<4x2xf32>, tensor<2xf32>
  %loss = nn.softmax_cross_entropy %4, %labels : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
