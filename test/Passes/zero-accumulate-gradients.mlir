// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=2" --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients=micro-batches=2 | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients=micro-batches=1 | FileCheck %s --check-prefix=ONE
// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=3" --nn-autodiff --zero-adamw --zero-placement=stage=0 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=3 mode=local" | FileCheck %s --check-prefix=LOCAL0
// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=3" --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=3 mode=local" | FileCheck %s --check-prefix=LOCAL3

// Two micro-batches of 2 rows per rank: the loss divides by all 8 rows of
// the step. The micro-step adds each reduced gradient shard into a float32
// accumulator argument as soon as it exists and returns the accumulators.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[ACC:[^:]*]]: tensor<8xf32> {nn.grad_accum = "fc.weight", zero.placement = #zero.placement<grad, sharded>, zero.unsharded_type = tensor<3x5xf32>}
// CHECK-SAME: attributes {{{.*}}zero.micro_batches = 2 : i64
// CHECK: nn.softmax_cross_entropy {{.*}} {divisor = 8 : i64}
// CHECK: %[[G:.*]] = zero.reduce_scatter %{{.*}} : tensor<3x5xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[SUM:.*]] = nn.add %[[ACC]], %[[G]] : tensor<8xf32>
// CHECK-NOT: nn.adamw
// CHECK: return %{{.*}}, %[[SUM]]

// The optimizer step takes the same arguments, reads the accumulators, and
// zeroes them.
// CHECK-LABEL: func.func @train_apply
// CHECK-SAME: %[[P:[^:]*]]: tensor<3x5xf32> {nn.param = "fc.weight", zero.placement = #zero.placement<param, replicated>}
// CHECK-SAME: %[[ACC:[^:]*]]: tensor<8xf32> {nn.grad_accum = "fc.weight"
// CHECK: %[[S:.*]] = zero.local_shard %[[P]]
// CHECK: nn.sum_squares %[[ACC]]
// CHECK: nn.clip_coefficient
// CHECK: %[[NEW:.*]], %{{.*}}, %{{.*}} = nn.adamw %[[S]], %[[ACC]],
// CHECK-NEXT: %[[FULL:.*]] = zero.all_gather %[[NEW]]
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: return %[[FULL]], {{.*}}, %[[ZERO]]

// Local accumulation at stage 0: the micro-step adds this rank's own
// gradient (no all-reduce but the loss's) into a whole accumulator; the
// optimizer step all-reduces the accumulator once.
// LOCAL0-LABEL: func.func @train_step
// LOCAL0-SAME: %[[ACC:[^:]*]]: tensor<3x5xf32> {nn.grad_accum = "fc.weight", zero.placement = #zero.placement<grad, replicated>}
// LOCAL0-SAME: zero.micro_batches = 3 : i64
// LOCAL0: %[[DW:.*]] = nn.matmul {{.*}} transpose_lhs
// LOCAL0-NEXT: %[[SUM:.*]] = nn.add %[[ACC]], %[[DW]] : tensor<3x5xf32>
// LOCAL0: zero.all_reduce %{{.*}} over @dp : tensor<f32>
// LOCAL0-NOT: zero.all_reduce
// LOCAL0: return %{{.*}}, %[[SUM]]
// LOCAL0-LABEL: func.func @train_apply
// LOCAL0-SAME: %[[ACC:[^:]*]]: tensor<3x5xf32> {nn.grad_accum = "fc.weight"
// LOCAL0: %[[G:.*]] = zero.all_reduce %[[ACC]] over @dp : tensor<3x5xf32>
// LOCAL0: nn.sum_squares %[[G]]
// LOCAL0: nn.adamw %{{.*}}, %[[G]],

// Stage 3 local: the accumulator is whole (unsharded gradient memory); the
// micro-step still gathers the parameter shard, the optimizer step
// reduce-scatters the accumulator once and updates the shard in place.
// LOCAL3-LABEL: func.func @train_step
// LOCAL3-SAME: %[[ACC:[^:]*]]: tensor<3x5xf32> {nn.grad_accum = "fc.weight", zero.placement = #zero.placement<grad, replicated>}
// LOCAL3: zero.all_gather
// LOCAL3-NOT: zero.reduce_scatter
// LOCAL3: nn.add %[[ACC]], %{{.*}} : tensor<3x5xf32>
// LOCAL3-LABEL: func.func @train_apply
// LOCAL3-NOT: zero.all_gather
// LOCAL3: %[[G:.*]] = zero.reduce_scatter %{{.*}} over @dp : tensor<3x5xf32> -> tensor<8xf32>
// LOCAL3: nn.adamw %{{.*}}, %[[G]],

// One micro-batch: nothing to split.
// ONE-NOT: @train_apply
// ONE-NOT: nn.grad_accum

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
