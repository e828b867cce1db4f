// RUN: zero-opt %s --verify-diagnostics --zero-clip-grad-norm

// expected-error @+1 {{zero-clip-grad-norm: @train_step has no nn.adamw}}
func.func @train_step(%x: tensor<4xf32>) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}
