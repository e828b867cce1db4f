// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-keep-gathered="units=h.1" | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-keep-gathered | FileCheck %s --check-prefix=ALL

// Keeping unit h.1: its weight's forward copy is not released after the
// forward and is what the backward reads; its second gather is gone. The
// head is still gathered twice. Biases, and the first weight (whose input
// gradient is dead), are gathered once anyway.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W1:[^:]*]]: tensor<13xf32> {nn.param = "h.1.fc.weight"
// CHECK-SAME: %[[WH:[^:]*]]: tensor<5xf32> {nn.param = "head.weight"
// CHECK: %[[G1:.*]] = zero.all_gather %[[W1]]
// CHECK-NEXT: nn.matmul %{{.*}}, %[[G1]] :
// CHECK-NOT: zero.release %[[G1]]
// CHECK: zero.all_gather %[[WH]]
// CHECK: zero.all_gather %[[WH]]
// CHECK-NOT: zero.all_gather %[[W1]]
// CHECK: nn.matmul %{{.*}}, %[[G1]] transpose_rhs
// CHECK-NEXT: zero.release %[[G1]]
// CHECK-NOT: zero.all_gather

// Every unit: each parameter is gathered exactly once per step.
// ALL-LABEL: func.func @train_step
// ALL-COUNT-5: zero.all_gather %arg{{[0-9]+}}
// ALL-NOT: zero.all_gather

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w0: tensor<3x5xf32> {nn.param = "h.0.fc.weight"}, %b0: tensor<5xf32> {nn.param = "h.0.fc.bias"},
                   %w1: tensor<5x5xf32> {nn.param = "h.1.fc.weight"}, %b1: tensor<5xf32> {nn.param = "h.1.fc.bias"},
                   %wh: tensor<5x2xf32> {nn.param = "head.weight"}) -> tensor<f32> {
  %0 = nn.matmul %x, %w0 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %1 = nn.bias_add %0, %b0 : tensor<4x5xf32>, tensor<5xf32>
  %2 = nn.relu %1 : tensor<4x5xf32>
  %3 = nn.matmul %2, %w1 : tensor<4x5xf32>, tensor<5x5xf32> -> tensor<4x5xf32>
  %4 = nn.bias_add %3, %b1 : tensor<4x5xf32>, tensor<5xf32>
  %5 = nn.relu %4 : tensor<4x5xf32>
  %6 = nn.matmul %5, %wh : tensor<4x5xf32>, tensor<5x2xf32> -> tensor<4x2xf32>
  %loss = nn.softmax_cross_entropy %6, %labels : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
