func.func @forward(%x: tensor<4x6xf32>, %labels: tensor<4xi32>,
                   %g: tensor<6xf32> {nn.param = "layers.0.norm.weight"},
                   %w: tensor<6x6xf32> {nn.param = "layers.0.fc.weight"},
                   %v: tensor<6x6xf32> {nn.param = "layers.0.proj.weight"},
                   %wh: tensor<6x3xf32> {nn.param = "head.weight"}) -> tensor<f32> {
  %0 = nn.rms_norm %x, %g {epsilon = 1.0e-5 : f32} : tensor<4x6xf32>, tensor<6xf32>
  %1 = nn.matmul %0, %w : tensor<4x6xf32>, tensor<6x6xf32> -> tensor<4x6xf32>
  %2 = nn.gelu %1 : tensor<4x6xf32>
  %3 = nn.matmul %2, %v : tensor<4x6xf32>, tensor<6x6xf32> -> tensor<4x6xf32>
  %4 = nn.add %x, %3 : tensor<4x6xf32>
  %5 = nn.matmul %4, %wh : tensor<4x6xf32>, tensor<6x3xf32> -> tensor<4x3xf32>
  %loss = nn.softmax_cross_entropy %5, %labels : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
