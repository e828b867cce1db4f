// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-exact-sums
// RUN: zero-opt %S/Inputs/exact-sums-bf16.mlir --verify-diagnostics --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-clip-grad-norm --zero-exact-sums
// RUN: zero-opt %S/Inputs/exact-sums-sharded.mlir --verify-diagnostics --zero-split-batch="world-size=2 micro-batches=2" --nn-autodiff --zero-adamw --zero-placement=stage=1 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=2 mode=sharded" --zero-exact-sums
// RUN: zero-opt %S/Inputs/exact-sums-twice.mlir --verify-diagnostics --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=0 --zero-insert-collectives --zero-clip-grad-norm --zero-exact-sums --zero-exact-sums

// expected-error @+1 {{zero-exact-sums: expected a func.func @train_step (run zero-accumulate-gradients first)}}
module {
  func.func @forward() {
    return
  }
}

// -----

// A step without data arguments has no chunk to speak of.
module {
  zero.group @dp world_size(1) stage(0)
  // expected-error @+1 {{zero-exact-sums: @train_step has no data argument (#zero.placement<data, sharded>) to tell the rows of a chunk (run zero-split-batch first)}}
  func.func @train_step(%w: tensor<4xf32>) -> tensor<f32> {
    %l = nn.sum_squares %w : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
