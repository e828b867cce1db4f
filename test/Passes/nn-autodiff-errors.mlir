// RUN: zero-opt %s --split-input-file --verify-diagnostics --nn-autodiff

// expected-error @+1 {{nn-autodiff: @forward must return one scalar loss (tensor<f32>), got 'tensor<4x4xf32>'}}
func.func @forward(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  return %x : tensor<4x4xf32>
}

// -----

func.func @forward(%x: tensor<4x4xf32>, %labels: tensor<4xi32>,
                   %w: tensor<4x4xf32> {nn.param = "w"}) -> tensor<f32> {
  // expected-error @+1 {{'arith.mulf' op has no gradient rule, but the loss depends on it (nn-autodiff)}}
  %h = arith.mulf %x, %w : tensor<4x4xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// expected-error @+1 {{nn-autodiff: expected a func.func @forward (the model's forward)}}
module {
}
