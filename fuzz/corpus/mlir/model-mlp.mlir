module {
  func.func @forward(%arg0: tensor<4x3xf32> {nn.data = "features"}, %arg1: tensor<4xi32> {nn.data = "labels"}, %arg2: tensor<3x4xf32> {nn.param = "fc0.weight"}, %arg3: tensor<4xf32> {nn.param = "fc0.bias"}, %arg4: tensor<4x2xf32> {nn.param = "fc1.weight"}, %arg5: tensor<2xf32> {nn.param = "fc1.bias"}) -> tensor<f32> {
    %0 = nn.matmul %arg0, %arg2 : tensor<4x3xf32>, tensor<3x4xf32> -> tensor<4x4xf32>
    %1 = nn.bias_add %0, %arg3 : tensor<4x4xf32>, tensor<4xf32>
    %2 = nn.relu %1 : tensor<4x4xf32>
    %3 = nn.matmul %2, %arg4 : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
    %4 = nn.bias_add %3, %arg5 : tensor<4x2xf32>, tensor<2xf32>
    %5 = nn.softmax_cross_entropy %4, %arg1 : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
    return %5 : tensor<f32>
  }
}

