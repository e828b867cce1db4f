// RUN: zero-opt %s --split-input-file --nn-autodiff | FileCheck %s

// A two-layer MLP: the backward ops come in reverse order of the forward
// ops, and @train_step returns the loss and one gradient per parameter.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x3xf32>, %[[L:[^:]*]]: tensor<4xi32>, %[[W0:[^:]*]]: tensor<3x5xf32> {nn.param = "fc0.weight"}, %[[B0:[^:]*]]: tensor<5xf32> {nn.param = "fc0.bias"}, %[[W1:[^:]*]]: tensor<5x2xf32> {nn.param = "fc1.weight"}, %[[B1:[^:]*]]: tensor<2xf32> {nn.param = "fc1.bias"})
// CHECK-SAME: -> (tensor<f32>, tensor<3x5xf32> {nn.grad_of = 2 : i64}, tensor<5xf32> {nn.grad_of = 3 : i64}, tensor<5x2xf32> {nn.grad_of = 4 : i64}, tensor<2xf32> {nn.grad_of = 5 : i64})
// CHECK: %[[H0:.*]] = nn.matmul %[[X]], %[[W0]]
// CHECK: %[[Y0:.*]] = nn.bias_add %[[H0]], %[[B0]]
// CHECK: %[[A0:.*]] = nn.relu %[[Y0]]
// CHECK: %[[H1:.*]] = nn.matmul %[[A0]], %[[W1]]
// CHECK: %[[LOGITS:.*]] = nn.bias_add %[[H1]], %[[B1]]
// CHECK: %[[LOSS:.*]] = nn.softmax_cross_entropy %[[LOGITS]], %[[L]]
// CHECK: %[[SEED:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DLOGITS:.*]] = nn.softmax_cross_entropy_grad %[[LOGITS]], %[[L]], %[[SEED]] {divisor = 4 : i64}
// CHECK: %[[DB1:.*]] = nn.sum_rows %[[DLOGITS]] : tensor<4x2xf32> -> tensor<2xf32>
// CHECK: %[[DA0:.*]] = nn.matmul %[[DLOGITS]], %[[W1]] transpose_rhs : tensor<4x2xf32>, tensor<5x2xf32> -> tensor<4x5xf32>
// CHECK: %[[DW1:.*]] = nn.matmul %[[A0]], %[[DLOGITS]] transpose_lhs : tensor<4x5xf32>, tensor<4x2xf32> -> tensor<5x2xf32>
// CHECK: %[[DY0:.*]] = nn.relu_grad %[[Y0]], %[[DA0]] : tensor<4x5xf32>
// CHECK: %[[DB0:.*]] = nn.sum_rows %[[DY0]]
// CHECK: %[[DW0:.*]] = nn.matmul %[[X]], %[[DY0]] transpose_lhs : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
// The gradient of the input batch is dead and is not computed.
// CHECK-NOT: nn.matmul %[[DY0]], %[[W0]]
// CHECK: return %[[LOSS]], %[[DW0]], %[[DB0]], %[[DW1]], %[[DB1]]
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

// -----

// A residual connection uses %h twice: its gradients are summed; a
// parameter the loss does not depend on gets a zero gradient.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[H:.*]] = nn.matmul
// CHECK: %[[G:.*]] = nn.gelu %[[H]]
// CHECK: nn.add %[[H]], %[[G]]
// CHECK: %[[DG:.*]] = nn.gelu_grad %[[H]], %[[DS:[^ ]*]] : tensor<4x4xf32>
// CHECK: %[[DH:.*]] = nn.add %[[DS]], %[[DG]] : tensor<4x4xf32>
// CHECK: %[[DW:.*]] = nn.matmul %{{.*}}, %[[DH]] transpose_lhs
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: return %{{.*}}, %[[DW]], %[[ZERO]]
func.func @forward(%x: tensor<4x4xf32>, %labels: tensor<4xi32>,
                   %w: tensor<4x4xf32> {nn.param = "w"},
                   %unused: tensor<4xf32> {nn.param = "unused"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %g = nn.gelu %h : tensor<4x4xf32>
  %s = nn.add %h, %g : tensor<4x4xf32>
  %loss = nn.softmax_cross_entropy %s, %labels : tensor<4x4xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
