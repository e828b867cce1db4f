// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-clip-grad-norm --zero-fp32-reductions | FileCheck %s --check-prefix=S2
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=0 --zero-insert-collectives --zero-clip-grad-norm --zero-fp32-reductions | FileCheck %s --check-prefix=S0
// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=3" --nn-autodiff --zero-adamw --zero-placement=stage=1 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=3 mode=sharded" --zero-fp32-reductions | FileCheck %s --check-prefix=SHARDED
// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=3" --nn-autodiff --zero-adamw --zero-placement=stage=1 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=3 mode=local" --zero-fp32-reductions | FileCheck %s --check-prefix=LOCAL

// Stage 2: the bfloat16 gradient is cast to float32 and reduce-scattered in
// float32 (4 bytes an element on the wire); AdamW and the norm read the
// float32 shard, never rounded to bfloat16.
// S2-LABEL: func.func @train_step
// S2: %[[DW:.*]] = nn.matmul {{.*}} -> tensor<3x5xbf16>
// S2-NEXT: %[[W:.*]] = nn.cast %[[DW]] : tensor<3x5xbf16> -> tensor<3x5xf32>
// S2-NEXT: %[[G:.*]] = zero.reduce_scatter %[[W]] over @dp : tensor<3x5xf32> -> tensor<8xf32>
// S2-NOT: zero.reduce_scatter {{.*}}bf16
// S2: nn.sum_squares %[[G]] of "fc.weight" : tensor<8xf32>
// S2: nn.adamw %{{.*}}, %[[G]], {{.*}} : tensor<8xf32>, tensor<8xf32>, tensor<f32>

// Stage 0: the all-reduce of the gradient is widened; the loss's was
// float32 already.
// S0-LABEL: func.func @train_step
// S0: %[[W:.*]] = nn.cast %{{.*}} : tensor<3x5xbf16> -> tensor<3x5xf32>
// S0-NEXT: %[[G:.*]] = zero.all_reduce %[[W]] over @dp : tensor<3x5xf32>
// S0-NEXT: zero.all_reduce %{{.*}} over @dp : tensor<f32>
// S0: nn.adamw %{{.*}}, %[[G]], {{.*}} : tensor<3x5xf32>, tensor<3x5xf32>, tensor<f32>

// Sharded accumulation: the float32 shard goes into the accumulator as it
// is (the cast to float32 after the bfloat16 reduction is gone).
// SHARDED-LABEL: func.func @train_step
// SHARDED-SAME: %[[ACC:[^:]*]]: tensor<8xf32> {nn.grad_accum = "fc.weight"
// SHARDED: %[[W:.*]] = nn.cast %{{.*}} : tensor<3x5xbf16> -> tensor<3x5xf32>
// SHARDED-NEXT: %[[G:.*]] = zero.reduce_scatter %[[W]] over @dp : tensor<3x5xf32> -> tensor<8xf32>
// SHARDED-NEXT: nn.add %[[ACC]], %[[G]] : tensor<8xf32>
// SHARDED-LABEL: func.func @train_apply
// SHARDED-NOT: zero.reduce_scatter

// Local accumulation: the float32 accumulator itself is reduced, once per
// step; its cast to bfloat16 for the wire is gone.
// LOCAL-LABEL: func.func @train_step
// LOCAL-NOT: zero.reduce_scatter
// LOCAL-LABEL: func.func @train_apply
// LOCAL-SAME: %[[ACC:[^:]*]]: tensor<3x5xf32> {nn.grad_accum = "fc.weight", zero.placement = #zero.placement<grad, replicated>}
// LOCAL-NOT: nn.cast %[[ACC]]
// LOCAL: %[[G:.*]] = zero.reduce_scatter %[[ACC]] over @dp : tensor<3x5xf32> -> tensor<8xf32>
// LOCAL: nn.adamw %{{.*}}, %[[G]], {{.*}} : tensor<8xf32>, tensor<8xf32>, tensor<f32>

func.func @forward(%x: tensor<8x3xbf16>, %labels: tensor<8xi32>,
                   %w: tensor<3x5xbf16> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<8x3xbf16>, tensor<3x5xbf16> -> tensor<8x5xbf16>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<8x5xbf16>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
