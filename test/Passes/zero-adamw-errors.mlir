// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-adamw

// expected-error @+1 {{zero-adamw: expected a func.func @train_step (run nn-autodiff first)}}
module {
  func.func @forward(%x: tensor<4xf32>) {
    return
  }
}

// -----

// expected-error @+1 {{zero-adamw: result #1 of @train_step has no nn.grad_of attribute}}
func.func @train_step(%w: tensor<4xf32> {nn.param = "w"}) -> (tensor<f32>, tensor<4xf32>) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
