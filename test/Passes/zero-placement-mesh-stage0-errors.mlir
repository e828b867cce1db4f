// RUN: zero-opt %s --verify-diagnostics --zero-placement="stage=0 shard-group-size=2"

// Stage 0 replicates everything: there is nothing to shard within groups.
// expected-error @+1 {{zero-placement: stage 0 shards nothing, so it has no shard groups}}
zero.group @dp world_size(4)

func.func @train_step(%w: tensor<4xf32> {nn.param = "w"}) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}
