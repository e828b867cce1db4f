// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=3" --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=3 mode=local" --zero-exact-sums | FileCheck %s --check-prefix=LOCAL
// RUN: zero-opt %s --zero-split-batch=world-size=4 --nn-autodiff --zero-adamw --zero-placement=stage=0 --zero-insert-collectives --zero-clip-grad-norm --zero-exact-sums | FileCheck %s --check-prefix=S0
// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=3" --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=3 mode=local" --zero-exact-sums --zero-extract-eval --zero-lower-to-zrt | FileCheck %s --check-prefix=ZRT

// Stage 2, three micro-batches accumulated locally: each rank computes
// chunks of 4 rows (8 / world size 2). The accumulators are i128; the
// micro-step adds into them exactly and returns the loss as an exact value,
// all-reduced exactly.
// LOCAL: module attributes {zero.deterministic = 4 : i64}
// LOCAL-LABEL: func.func @train_step
// LOCAL-SAME: %[[ACC:[^:]*]]: tensor<3x5xi128> {nn.grad_accum = "fc.weight", zero.placement = #zero.placement<grad, replicated>}
// LOCAL-SAME: -> (tensor<i128>, tensor<3x5xi128> {zero.updates = [[ACCN:[0-9]+]] : i64})
// LOCAL: %[[DW:.*]] = nn.matmul {{.*}} -> tensor<3x5xf32>
// LOCAL: %[[SUM:.*]] = nn.accumulate_exact %[[ACC]], %[[DW]] : tensor<3x5xi128>, tensor<3x5xf32> -> tensor<3x5xi128>
// LOCAL: %[[Z:.*]] = arith.constant dense<0> : tensor<i128>
// LOCAL-NEXT: %[[L:.*]] = nn.accumulate_exact %[[Z]], %{{.*}} : tensor<i128>, tensor<f32> -> tensor<i128>
// LOCAL-NEXT: %[[LR:.*]] = zero.all_reduce %[[L]] over @dp : tensor<i128>
// LOCAL-NOT: nn.from_exact
// LOCAL: return %[[LR]], %[[SUM]] : tensor<i128>, tensor<3x5xi128>
//
// The apply step reduce-scatters the integers, converts the shard once, and
// takes the norm from exact squares, all-reduced as an integer; the
// accumulator is returned as an i128 zero.
// LOCAL-LABEL: func.func @train_apply
// LOCAL-SAME: %[[AACC:[^:]*]]: tensor<3x5xi128> {nn.grad_accum = "fc.weight"
// LOCAL: %[[RS:.*]] = zero.reduce_scatter %[[AACC]] over @dp : tensor<3x5xi128> -> tensor<8xi128>
// LOCAL-NEXT: %[[G:.*]] = nn.from_exact %[[RS]] : tensor<8xi128> -> tensor<8xf32>
// LOCAL: %[[Z0:.*]] = arith.constant dense<0> : tensor<i128>
// LOCAL-NEXT: %[[SQ:.*]] = nn.sum_squares_exact %[[Z0]], %[[G]] of "fc.weight" : tensor<i128>, tensor<8xf32> -> tensor<i128>
// LOCAL-NEXT: %[[NR:.*]] = zero.all_reduce %[[SQ]] over @dp : tensor<i128>
// LOCAL-NEXT: %[[N:.*]] = nn.from_exact %[[NR]] : tensor<i128> -> tensor<f32>
// LOCAL-NEXT: %[[C:.*]] = nn.clip_coefficient %[[N]]
// LOCAL-NOT: nn.sum_squares %
// LOCAL: nn.adamw %{{.*}}, %[[G]], {{.*}} grad_scale = %[[C]]
// LOCAL: %[[ZA:.*]] = arith.constant dense<0> : tensor<3x5xi128>
// LOCAL: return {{.*}}, %[[ZA]] : {{.*}}, tensor<3x5xi128>

// Stage 0 without accumulation (chunks of 2 rows at world size 4): the
// gradient is converted into a zero accumulator, all-reduced exactly and
// converted back for AdamW and the (unreduced) norm.
// S0: module attributes {zero.deterministic = 2 : i64}
// S0-LABEL: func.func @train_step
// S0: %[[DW:.*]] = nn.matmul {{.*}} -> tensor<3x5xf32>
// S0-NEXT: %[[Z:.*]] = arith.constant dense<0> : tensor<3x5xi128>
// S0-NEXT: %[[E:.*]] = nn.accumulate_exact %[[Z]], %[[DW]] : tensor<3x5xi128>, tensor<3x5xf32> -> tensor<3x5xi128>
// S0-NEXT: %[[R:.*]] = zero.all_reduce %[[E]] over @dp : tensor<3x5xi128>
// S0-NEXT: %[[G:.*]] = nn.from_exact %[[R]] : tensor<3x5xi128> -> tensor<3x5xf32>
// S0: nn.sum_squares_exact %{{.*}}, %[[G]] of "fc.weight"
// S0-NOT: zero.all_reduce {{.*}} : tensor<i128>
// S0: nn.from_exact %{{.*}} : tensor<i128> -> tensor<f32>
// S0: nn.adamw %{{.*}}, %[[G]]
// S0: return %{{.*}} : tensor<i128>,

// Lowered: the program declares its chunk, the accumulator is a ZRT_EXACT
// argument, and the exact ops become their kernels (the step's loss buffer
// is an i128).
// ZRT-LABEL: func.func @zero_program_describe
// ZRT: zrt.declare_deterministic chunk_rows(4)
// ZRT: zrt.declare_arg 12 "grad_accum.fc.weight" grad_accum init zeros {{.*}} : tensor<3x5xi128>
// ZRT-LABEL: func.func @zero_program_step
// ZRT-SAME: memref<i128> {zrt.loss}
// ZRT: zrt.accumulate_exact %{{.*}} into %{{.*}} : memref<3x5xf32> into memref<3x5xi128>
// ZRT: zrt.all_reduce %{{.*}} -> %{{.*}} of "loss" : memref<i128> -> memref<i128>
// ZRT-LABEL: func.func @zero_program_apply
// ZRT: zrt.reduce_scatter %{{.*}} -> %{{.*}} : memref<3x5xi128> -> memref<8xi128>
// ZRT: zrt.from_exact %{{.*}} -> %{{.*}} : memref<8xi128> -> memref<8xf32>
// ZRT: zrt.sum_squares_exact %{{.*}} into %{{.*}} : memref<8xf32> into memref<i128>
// ZRT: zrt.fill %{{.*}} with 0.000000e+00 : memref<3x5xi128>
// ZRT-LABEL: func.func @zero_program_eval
// ZRT-SAME: memref<i128> {zrt.loss}

func.func @forward(%x: tensor<8x3xf32>, %labels: tensor<8xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<8x3xf32>, tensor<3x5xf32> -> tensor<8x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<8x5xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
