// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-schedule-overlap | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-schedule-overlap=prefetch=0 | FileCheck %s --check-prefix=NOPREFETCH
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-schedule-overlap="max-live-gather-bytes=70" | FileCheck %s --check-prefix=CAP

// Stage 3, two layers. Every collective becomes start + wait; each wait sits
// right before the first use of its tensor; the gather of the next
// parameter starts as the current one's wait is reached (prefetch 1).
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W0:[^:]*]]: tensor<8xf32> {nn.param = "fc0.weight"
// CHECK-SAME: %[[W1:[^:]*]]: tensor<5xf32> {nn.param = "fc1.weight"
// CHECK: %[[F0:.*]] = zero.all_gather_start %[[W0]]
// The first bias is already in flight when the first weight is waited for.
// CHECK-NEXT: %[[FB0:.*]] = zero.all_gather_start %{{.*}} : tensor<3xf32>
// CHECK-NEXT: %[[G0:.*]] = zero.wait %[[F0]]
// CHECK-NEXT: nn.matmul %{{.*}}, %[[G0]]
// CHECK-NEXT: zero.release %[[G0]]
// CHECK-NEXT: %[[F1:.*]] = zero.all_gather_start %[[W1]]
// CHECK-NEXT: zero.wait %[[FB0]]
// Gradient reductions start as each gradient is produced; at most one is in
// flight: the previous one is waited for before the next starts.
// CHECK: %[[R0:.*]] = zero.reduce_scatter_start
// CHECK-NOT: zero.reduce_scatter_start
// CHECK: zero.wait %[[R0]]
// CHECK-NEXT: zero.reduce_scatter_start
// CHECK-NOT: zero.all_gather {{.*}} :
// CHECK-NOT: zero.reduce_scatter {{.*}} :

// Without prefetch each gather starts right before its wait.
// NOPREFETCH-LABEL: func.func @train_step
// NOPREFETCH: %[[F0:.*]] = zero.all_gather_start
// NOPREFETCH-NEXT: zero.wait %[[F0]]

// A cap of 70 bytes: the 60-byte first weight and the 20-byte first bias
// do not fit together, so the bias is not hoisted; the bias and the 40-byte
// second weight do, so that one is.
// CAP-LABEL: func.func @train_step
// CAP: %[[F0:.*]] = zero.all_gather_start %{{.*}} : tensor<8xf32>
// CAP-NEXT: zero.wait %[[F0]]
// CAP-NEXT: nn.matmul
// CAP-NEXT: zero.release
// CAP-NEXT: %[[FB0:.*]] = zero.all_gather_start %{{.*}} : tensor<3xf32>
// CAP-NEXT: zero.all_gather_start %{{.*}} : tensor<5xf32>
// CAP-NEXT: zero.wait %[[FB0]]

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
