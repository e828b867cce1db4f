// RUN: zero-opt %s --verify-diagnostics --zero-placement="stage=5 world-size=2"
// RUN: not zero-opt %s --zero-placement="stage=1 world-size=0" 2>&1 | FileCheck %s --check-prefix=WS
// WS: zero-placement: world-size must be at least 1, got 0

// expected-error @+1 {{zero-placement: stage must be 0, 1, 2 or 3, got 5}}
func.func @train_step(%w: tensor<4xf32> {nn.param = "w"}) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}
