// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=2" --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients=micro-batches=2 --zero-extract-eval | FileCheck %s

// One 3x5 weight at stage 3 over 2 ranks, 2 micro-batches: @eval_step has
// @train_step's arguments (the runtime passes it the same buffers) and
// keeps only what the loss needs: the parameter's gather, the forward, the
// loss and its all-reduce. No backward, no reduce-scatter, no accumulation,
// no update; @train_step and @train_apply are as they were.
// CHECK-LABEL: func.func @train_step(
// CHECK: zero.reduce_scatter
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32>
// CHECK-SAME: %[[LABELS:[a-z0-9]+]]: tensor<2xi32>
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<8xf32> {nn.param = "fc.weight"
// CHECK-SAME: {nn.grad_accum = "fc.weight"
// CHECK-SAME: -> tensor<f32>
// CHECK-NEXT: %[[FULL:.+]] = zero.all_gather %[[W]] over @dp : tensor<8xf32> -> tensor<3x5xf32>
// CHECK-NEXT: %[[H:.+]] = nn.matmul %[[X]], %[[FULL]]
// CHECK-NEXT: %[[LOSS:.+]] = nn.softmax_cross_entropy %[[H]], %[[LABELS]] {divisor = 8 : i64}
// CHECK-NEXT: %[[SUM:.+]] = zero.all_reduce %[[LOSS]] over @dp : tensor<f32>
// CHECK-NEXT: return %[[SUM]] : tensor<f32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @train_apply(
// CHECK: nn.adamw

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
