// RUN: zero-opt %s --split-input-file --zero-lower-to-zrt | FileCheck %s

// The loss and its gradient are one kernel when the step reads the loss
// only after the gradient: the loss's buffer is still allocated where the
// loss was (the ledger is charged as before), and written by the fused
// kernel at the gradient.
// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: (%[[X:.*]]: memref<4x3xf32>, %[[LABELS:.*]]: memref<4xi32>, %[[LOSS_OUT:.*]]: memref<f32> {zrt.loss})
// CHECK: %[[LOSS:.*]] = zrt.alloc activation : memref<f32>
// CHECK-NEXT: %[[SEED:.*]] = zrt.alloc activation : memref<f32>
// CHECK-NEXT: zrt.fill %[[SEED]] with 2.500000e-01
// CHECK-NEXT: %[[DX:.*]] = zrt.alloc activation : memref<4x3xf32>
// CHECK-NEXT: zrt.softmax_xent_fused %[[X]], %[[LABELS]], %[[SEED]] -> %[[LOSS]], %[[DX]] divisor 8.000000e+00
// CHECK-NOT: zrt.softmax_xent
// CHECK: zrt.copy 4 bytes %[[LOSS]][0] to %[[LOSS_OUT]][0]
func.func @train_step(%x: tensor<4x3xf32>, %labels: tensor<4xi32>) -> tensor<f32> attributes {nn.seq_len = 1 : i64} {
  %loss = nn.softmax_cross_entropy %x, %labels {divisor = 8 : i64} : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  %seed = arith.constant dense<0.25> : tensor<f32>
  %dx = nn.softmax_cross_entropy_grad %x, %labels, %seed {divisor = 8 : i64} : tensor<4x3xf32>, tensor<4xi32>, tensor<f32>
  %s = nn.sum_squares %dx : tensor<4x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Read before the gradient (here by a kernel), the loss is computed where
// it stands, and the gradient apart.
// CHECK-LABEL: func.func @zero_program_step
// CHECK: zrt.softmax_xent %{{.*}}, %{{.*}} -> %[[LOSS:[^ ]*]] divisor 8.000000e+00
// CHECK: zrt.sum_squares %[[LOSS]]
// CHECK: zrt.softmax_xent_grad
// CHECK-NOT: zrt.softmax_xent_fused
func.func @train_step(%x: tensor<4x3xf32>, %labels: tensor<4xi32>) -> tensor<f32> attributes {nn.seq_len = 1 : i64} {
  %loss = nn.softmax_cross_entropy %x, %labels {divisor = 8 : i64} : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  %read = nn.sum_squares %loss : tensor<f32> -> tensor<f32>
  %dx = nn.softmax_cross_entropy_grad %x, %labels, %read {divisor = 8 : i64} : tensor<4x3xf32>, tensor<4xi32>, tensor<f32>
  %s = nn.sum_squares %dx : tensor<4x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
