// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-extract-eval

// expected-error @+1 {{zero-extract-eval: expected a func.func @train_step (run zero-accumulate-gradients first)}}
module {
  func.func @forward() {
    return
  }
}

// -----

func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{zero-extract-eval: @train_step's first result must be its scalar loss}}
  return %x : tensor<4xf32>
}

// -----

func.func @train_step(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
// expected-error @+1 {{zero-extract-eval: @eval_step already exists}}
func.func @eval_step(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
