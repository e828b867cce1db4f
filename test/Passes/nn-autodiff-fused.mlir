// RUN: zero-opt %s --nn-autodiff | FileCheck %s

// The fused linear ops written by hand in @forward have gradients too: the
// ops autodiff emits for the unfused matmul, bias_add and gelu. The output
// layer's pre-activation gradient (dPre, the gradient of the pre-activation
// itself, used by nothing but the GELU here) is autodiff's zero and is
// not added.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[PRE:.*]], %[[G:.*]] = nn.matmul_bias_gelu %arg0, %arg2, %arg3
// CHECK: %[[LOGITS:.*]] = nn.matmul_bias %[[G]], %arg4, %arg5 transpose_rhs
// CHECK: %[[DL:.*]] = nn.softmax_cross_entropy_grad %[[LOGITS]]
// CHECK-DAG: %[[DG:.*]] = nn.matmul %[[DL]], %arg4 : tensor<8x3xf32>, tensor<3x16xf32> -> tensor<8x16xf32>
// CHECK-DAG: %[[DW2:.*]] = nn.matmul %[[DL]], %[[G]] transpose_lhs : tensor<8x3xf32>, tensor<8x16xf32> -> tensor<3x16xf32>
// CHECK-DAG: %[[DB2:.*]] = nn.sum_rows %[[DL]]
// CHECK: %[[DZ:.*]] = nn.gelu_grad %[[PRE]], %[[DG]]
// CHECK-NOT: nn.add
// CHECK-DAG: %[[DW1:.*]] = nn.matmul %arg0, %[[DZ]] transpose_lhs
// CHECK-DAG: %[[DB1:.*]] = nn.sum_rows %[[DZ]]
// CHECK: return %{{.*}}, %[[DW1]], %[[DB1]], %[[DW2]], %[[DB2]]

func.func @forward(%x: tensor<8x4xf32>, %labels: tensor<8xi32>,
                   %w1: tensor<4x16xf32> {nn.param = "fc1.weight"}, %b1: tensor<16xf32> {nn.param = "fc1.bias"},
                   %w2: tensor<3x16xf32> {nn.param = "fc2.weight"}, %b2: tensor<3xf32> {nn.param = "fc2.bias"}) -> tensor<f32> {
  %pre, %g = nn.matmul_bias_gelu %x, %w1, %b1 : tensor<8x4xf32>, tensor<4x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %logits = nn.matmul_bias %g, %w2, %b2 transpose_rhs : tensor<8x16xf32>, tensor<3x16xf32>, tensor<3xf32> -> tensor<8x3xf32>
  %loss = nn.softmax_cross_entropy %logits, %labels : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
