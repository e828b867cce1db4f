func.func private @forward(tensor<4x3xf32>, tensor<3x5xf32> {nn.param = "w"}) -> tensor<f32>
