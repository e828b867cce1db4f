// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-offload-optimizer

// expected-error @+1 {{zero-offload-optimizer: expected a func.func @train_step (run zero-adamw first)}}
module {
  func.func @forward() {
    return
  }
}

// -----

// Placement says which arguments are optimizer state.
module {
  // expected-error @+1 {{zero-offload-optimizer: argument #0 has no #zero.placement; run zero-placement first}}
  func.func @train_step(%w: tensor<4xf32>) -> tensor<f32> {
    %l = nn.sum_squares %w : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Nothing to offload: a step without an optimizer is a mistake, not a no-op.
module {
  // expected-error @+1 {{zero-offload-optimizer: the program has no nn.adamw to run on the host}}
  func.func @train_step(%w: tensor<4xf32> {zero.placement = #zero.placement<param, replicated>}) -> tensor<f32> {
    %l = nn.sum_squares %w : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
