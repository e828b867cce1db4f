// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-placement=stage=5

zero.group @dp world_size(2)

// expected-error @+1 {{zero-placement: stage must be 0, 1, 2 or 3, got 5}}
func.func @train_step(%w: tensor<4xf32> {nn.param = "w"}) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// The world size comes from the group that zero-split-batch declares.
// expected-error @+1 {{zero-placement: the module has no zero.group @dp to shard over; run zero-split-batch first}}
func.func @train_step(%w: tensor<4xf32> {nn.param = "w"}) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}
