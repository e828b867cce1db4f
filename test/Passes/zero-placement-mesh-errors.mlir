// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-placement="stage=3 shard-group-size=3"
// What zero-placement refuses about hybrid sharding's groups.

// The groups must tile the world: 3 does not divide 4.
// expected-error @+1 {{zero-placement: shard-group-size 3 must be at least 2 and divide the world size 4}}
zero.group @dp world_size(4)

func.func @train_step(%w: tensor<4xf32> {nn.param = "w"}) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

zero.group @dp world_size(6)
// expected-error @+1 {{zero-placement: the module already has a zero.group @shard}}
zero.group @shard world_size(2) axis(shard) of @dp

func.func @train_step(%w: tensor<4xf32> {nn.param = "w"}) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

