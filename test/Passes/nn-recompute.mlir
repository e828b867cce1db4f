// RUN: zero-opt %s --nn-autodiff --nn-recompute=units=blocks | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --nn-recompute=units=h.1 --zero-placement=stage=3 --zero-insert-collectives | FileCheck %s --check-prefix=STAGE3
// RUN: zero-opt %S/Inputs/recompute-chain.mlir --nn-autodiff --nn-recompute=units=blocks | FileCheck %s --check-prefix=CHAIN

// Two residual blocks and a head. Without recomputation the backward reads
// each block's pre-activation (%0, %3) from the forward, so they live from
// forward to backward. With every block recomputed the forward is
// untouched, and each GELU gradient reads a clone of the matmul that made
// its pre-activation, cloned just before it from what the block takes in
// (x, the first block's output %2): the originals are read only in the
// forward. The blocks' outputs (%2, %5) are not recomputed: the next block
// or the head reads them in the forward, so they are kept.
// CHECK: module attributes {zero.recompute = {ops = 2 : i64, units = ["h.0", "h.1"]}}
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x6xf32>, %{{[^:]*}}: tensor<4xi32>, %[[W0:[^:]*]]: tensor<6x6xf32> {nn.param = "h.0.fc.weight"}, %[[W1:[^:]*]]: tensor<6x6xf32> {nn.param = "h.1.fc.weight"}
// CHECK: %[[PRE0:.*]] = nn.matmul %[[X]], %[[W0]] :
// CHECK-NEXT: %[[ACT0:.*]] = nn.gelu %[[PRE0]]
// CHECK-NEXT: %[[OUT0:.*]] = nn.add %[[X]], %[[ACT0]]
// CHECK-NEXT: %[[PRE1:.*]] = nn.matmul %[[OUT0]], %[[W1]] :
// CHECK: nn.softmax_cross_entropy_grad
// CHECK-NOT: %[[PRE1]]{{[ ,]}}
// CHECK: %[[AGAIN1:.*]] = nn.matmul %[[OUT0]], %[[W1]] {nn.recomputed = "h.1"}
// CHECK-NEXT: nn.gelu_grad %[[AGAIN1]],
// CHECK-NOT: %[[PRE0]]{{[ ,]}}
// CHECK: %[[AGAIN0:.*]] = nn.matmul %[[X]], %[[W0]] {nn.recomputed = "h.0"}
// CHECK-NEXT: nn.gelu_grad %[[AGAIN0]],
// CHECK-NOT: %[[PRE0]]{{[ ,]}}
// CHECK-NOT: %[[PRE1]]{{[ ,]}}
// CHECK: return

// Stage 3, h.1 only: the backward gathers h.1's weight before its clone,
// which reads the gathered copy; h.0 is not recomputed, so its GELU
// gradient still reads the forward's pre-activation.
// STAGE3: module attributes {zero.recompute = {ops = 1 : i64, units = ["h.1"]}}
// STAGE3-LABEL: func.func @train_step
// STAGE3: %[[PRE0:.*]] = nn.matmul %arg0, %{{.*}} :
// STAGE3: nn.softmax_cross_entropy_grad
// STAGE3: %[[GATHERED:.*]] = zero.all_gather %arg3
// STAGE3-NEXT: %[[AGAIN:.*]] = nn.matmul %{{.*}}, %[[GATHERED]] {nn.recomputed = "h.1"}
// STAGE3-NEXT: nn.gelu_grad %[[AGAIN]],
// STAGE3: nn.gelu_grad %[[PRE0]],
// STAGE3-NOT: nn.recomputed

// A chain (Inputs/recompute-chain.mlir: rms_norm, matmul, GELU, matmul,
// residual add): the backward first reads the GELU's output (the second
// weight's gradient), so the three ops it needs are cloned, in order, just
// before that GEMM; the GELU gradient and the first weight's gradient then
// read the same clones. The closing matmul and add are not run again: the
// backward reads only their gradients.
// CHAIN: module attributes {zero.recompute = {ops = 3 : i64, units = ["layers.0"]}}
// CHAIN-LABEL: func.func @train_step
// CHAIN: %[[PRE:.*]] = nn.matmul %{{.*}}, %arg3 :
// CHAIN: %[[GRAD_IN:.*]] = nn.matmul %{{.*}}, %arg4 transpose_rhs
// CHAIN-NEXT: %[[NORM:.*]] = nn.rms_norm %arg0, %arg2 {{{.*}}nn.recomputed = "layers.0"}
// CHAIN-NEXT: %[[AGAIN:.*]] = nn.matmul %[[NORM]], %arg3 {nn.recomputed = "layers.0"}
// CHAIN-NEXT: %[[ACT:.*]] = nn.gelu %[[AGAIN]] {nn.recomputed = "layers.0"}
// CHAIN-NEXT: nn.matmul %[[ACT]], %{{.*}} transpose_lhs
// CHAIN-NEXT: %[[DPRE:.*]] = nn.gelu_grad %[[AGAIN]], %[[GRAD_IN]]
// CHAIN: nn.matmul %[[NORM]], %[[DPRE]] transpose_lhs
// CHAIN-NOT: nn.recomputed
// CHAIN-NOT: %[[PRE]]{{[ ,]}}

func.func @forward(%x: tensor<4x6xf32>, %labels: tensor<4xi32>,
                   %w0: tensor<6x6xf32> {nn.param = "h.0.fc.weight"},
                   %w1: tensor<6x6xf32> {nn.param = "h.1.fc.weight"},
                   %wh: tensor<6x3xf32> {nn.param = "head.weight"}) -> tensor<f32> {
  %0 = nn.matmul %x, %w0 : tensor<4x6xf32>, tensor<6x6xf32> -> tensor<4x6xf32>
  %1 = nn.gelu %0 : tensor<4x6xf32>
  %2 = nn.add %x, %1 : tensor<4x6xf32>
  %3 = nn.matmul %2, %w1 : tensor<4x6xf32>, tensor<6x6xf32> -> tensor<4x6xf32>
  %4 = nn.gelu %3 : tensor<4x6xf32>
  %5 = nn.add %2, %4 : tensor<4x6xf32>
  %6 = nn.matmul %5, %wh : tensor<4x6xf32>, tensor<6x3xf32> -> tensor<4x3xf32>
  %loss = nn.softmax_cross_entropy %6, %labels : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
