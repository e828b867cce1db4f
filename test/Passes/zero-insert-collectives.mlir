// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=0 --zero-insert-collectives | FileCheck %s --check-prefix=S0
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=1 --zero-insert-collectives | FileCheck %s --check-prefix=S1
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives | FileCheck %s --check-prefix=S2
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives | FileCheck %s --check-prefix=S3

// Stage 0 (DDP): every gradient is all-reduced; AdamW updates whole tensors.
// S0-LABEL: func.func @train_step
// S0-NOT: zero.reduce_scatter
// S0-NOT: zero.all_gather
// S0: %[[G:.*]] = zero.all_reduce %{{.*}} over @dp : tensor<3x5xf32>
// S0-NEXT: nn.adamw %{{.*}}, %[[G]], {{.*}} : tensor<3x5xf32>, tensor<3x5xf32>, tensor<f32>
// S0: %[[LOSS:.*]] = zero.all_reduce %{{.*}} over @dp : tensor<f32>
// S0-NEXT: return %[[LOSS]]

// Stages 1 and 2: reduce-scatter each gradient, update this rank's shard of
// the replicated parameter, all-gather the new shards into the parameter.
// They differ in when: stage 1 keeps every whole gradient to the end of the
// backward pass (ZeRO-1 partitions only the optimizer state), stage 2
// reduce-scatters each gradient as soon as it is produced.
// S1-LABEL: func.func @train_step
// S1: %[[DB1:.*]] = nn.sum_rows %{{.*}} : tensor<2x2xf32> -> tensor<2xf32>
// S1-NOT: zero.reduce_scatter
// S1: nn.matmul %{{.*}}, %{{.*}} transpose_lhs : tensor<2x3xf32>, tensor<2x5xf32> -> tensor<3x5xf32>
// S1-NEXT: zero.reduce_scatter
// S2-LABEL: func.func @train_step
// S2-SAME: %[[W0:[^:]*]]: tensor<3x5xf32> {nn.param = "fc0.weight", zero.placement = #zero.placement<param, replicated>}
// S2-SAME: tensor<8xf32> {nn.adam_m = "fc0.weight", zero.placement = #zero.placement<moment, sharded>, zero.unsharded_type = tensor<3x5xf32>}
// S2: %[[DB1:.*]] = nn.sum_rows %{{.*}} : tensor<2x2xf32> -> tensor<2xf32>
// S2-NEXT: zero.reduce_scatter %[[DB1]] over @dp : tensor<2xf32> -> tensor<1xf32>
// S2-NOT: zero.all_reduce %{{.*}} : tensor<3x5xf32>
// S2: %[[G:.*]] = zero.reduce_scatter %{{.*}} over @dp : tensor<3x5xf32> -> tensor<8xf32>
// S2-NEXT: %[[P:.*]] = zero.local_shard %[[W0]] over @dp : tensor<3x5xf32> -> tensor<8xf32>
// S2-NEXT: %[[NEW:.*]], %{{.*}}, %{{.*}} = nn.adamw %[[P]], %[[G]], {{.*}} : tensor<8xf32>, tensor<8xf32>, tensor<f32>
// S2-NEXT: %[[FULL:.*]] = zero.all_gather %[[NEW]] over @dp : tensor<8xf32> -> tensor<3x5xf32>
// S2: return %{{.*}}, %[[FULL]],

// Stage 3: parameters are shards; each is gathered before its first forward
// use and again before its first backward use, and released after the last
// use of each phase; gradients are reduce-scattered; AdamW touches only the
// local shards, in place.
// S3-LABEL: func.func @train_step
// S3-SAME: %[[W0:[^:]*]]: tensor<8xf32> {nn.param = "fc0.weight", zero.placement = #zero.placement<param, sharded>, zero.unsharded_type = tensor<3x5xf32>}
// S3-SAME: %[[W1:[^:]*]]: tensor<5xf32> {nn.param = "fc1.weight", zero.placement = #zero.placement<param, sharded>, zero.unsharded_type = tensor<5x2xf32>}
// Forward:
// S3: %[[F0:.*]] = zero.all_gather %[[W0]] over @dp : tensor<8xf32> -> tensor<3x5xf32>
// S3-NEXT: nn.matmul %{{.*}}, %[[F0]]
// S3-NEXT: zero.release %[[F0]] : tensor<3x5xf32>
// S3: %[[F1:.*]] = zero.all_gather %[[W1]] over @dp : tensor<5xf32> -> tensor<5x2xf32>
// S3-NEXT: nn.matmul %{{.*}}, %[[F1]]
// S3-NEXT: zero.release %[[F1]] : tensor<5x2xf32>
// S3: nn.softmax_cross_entropy
// Backward: fc1.weight is needed again for the gradient of its input.
// S3: %[[B1:.*]] = zero.all_gather %[[W1]] over @dp : tensor<5xf32> -> tensor<5x2xf32>
// S3-NEXT: nn.matmul %{{.*}}, %[[B1]] transpose_rhs
// S3-NEXT: zero.release %[[B1]] : tensor<5x2xf32>
// fc0.weight's backward use would only compute the gradient of the input
// batch, which is dead: no second gather for it.
// S3-NOT: zero.all_gather %[[W0]]
// S3: %[[G0:.*]] = zero.reduce_scatter %{{.*}} over @dp : tensor<3x5xf32> -> tensor<8xf32>
// S3-NEXT: nn.adamw %[[W0]], %[[G0]], {{.*}} : tensor<8xf32>, tensor<8xf32>, tensor<f32>
// S3-NOT: zero.local_shard
// S3-NOT: zero.all_gather
// S3: return

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w0: tensor<3x5xf32> {nn.param = "fc0.weight"}, %b0: tensor<5xf32> {nn.param = "fc0.bias"},
                   %w1: tensor<5x2xf32> {nn.param = "fc1.weight"}, %b1: tensor<2xf32> {nn.param = "fc1.bias"}) -> tensor<f32> {
  %0 = nn.matmul %x, %w0 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %1 = nn.bias_add %0, %b0 : tensor<4x5xf32>, tensor<5xf32>
  %2 = nn.relu %1 : tensor<4x5xf32>
  %3 = nn.matmul %2, %w1 : tensor<4x5xf32>, tensor<5x2xf32> -> tensor<4x2xf32>
  %4 = nn.bias_add %3, %b1 : tensor<4x2xf32>, tensor<2xf32>
  %loss = nn.softmax_cross_entropy %4, %labels : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
