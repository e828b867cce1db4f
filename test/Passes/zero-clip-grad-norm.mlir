// RUN: zero-opt %s --nn-autodiff --zero-adamw --zero-placement=stage=0 --zero-insert-collectives --zero-clip-grad-norm | FileCheck %s --check-prefix=S0
// RUN: zero-opt %s --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-clip-grad-norm | FileCheck %s --check-prefix=S2

// Stage 0: every rank holds the whole reduced gradients, so the local sum of
// squares is already the global one.
// S0-LABEL: func.func @train_step
// S0-SAME: %[[MAX:[^:]*]]: tensor<f32> {nn.hyper = "max_norm", zero.placement = #zero.placement<hyper, replicated>})
// The gradients are all-reduced as soon as they are produced (DDP).
// S0-DAG: %[[GW:.*]] = zero.all_reduce %{{.*}} : tensor<3x5xf32>
// S0-DAG: %[[GB:.*]] = zero.all_reduce %{{.*}} : tensor<5xf32>
// S0: %[[SW:.*]] = nn.sum_squares %[[GW]] of "fc.weight" : tensor<3x5xf32> -> tensor<f32>
// S0-NEXT: %[[SB:.*]] = nn.sum_squares %[[GB]] of "fc.bias" : tensor<5xf32> -> tensor<f32>
// S0-NEXT: %[[T:.*]] = nn.add %[[SW]], %[[SB]] : tensor<f32>
// S0-NEXT: %[[C:.*]] = nn.clip_coefficient %[[T]], %[[MAX]] : tensor<f32>
// The updates follow the coefficient, which needs every gradient.
// S0-NEXT: nn.adamw %{{.*}}, %[[GW]], {{.*}}, grad_scale = %[[C]] : tensor<f32>
// S0-NEXT: nn.adamw %{{.*}}, %[[GB]], {{.*}}, grad_scale = %[[C]] : tensor<f32>
// S0-NEXT: return

// Stages 1-3: each rank holds shards; the sums are added over the ranks.
// Padding is zero and adds nothing.
// S2-LABEL: func.func @train_step
// S2: %[[SW:.*]] = nn.sum_squares %{{.*}} of "fc.weight" : tensor<8xf32> -> tensor<f32>
// S2-NEXT: %[[SB:.*]] = nn.sum_squares %{{.*}} of "fc.bias" : tensor<3xf32> -> tensor<f32>
// S2-NEXT: %[[T:.*]] = nn.add %[[SW]], %[[SB]] : tensor<f32>
// S2-NEXT: %[[G:.*]] = zero.all_reduce %[[T]] over @dp : tensor<f32>
// S2-NEXT: %[[C:.*]] = nn.clip_coefficient %[[G]], %{{.*}} : tensor<f32>
// S2: nn.adamw {{.*}} grad_scale = %[[C]] : tensor<f32>
// The all-gathers of the new parameter shards move with their updates.
// S2-NEXT: zero.all_gather
// S2: return

// Already split for 2 ranks: the group zero-split-batch would declare.
zero.group @dp world_size(2)

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"},
                   %b: tensor<5xf32> {nn.param = "fc.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %y = nn.bias_add %h, %b : tensor<4x5xf32>, tensor<5xf32>
  %loss = nn.softmax_cross_entropy %y, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
