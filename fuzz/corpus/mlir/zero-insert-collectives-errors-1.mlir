func.func @train_step(%w: tensor<4xf32>) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}
