// RUN: not zero-opt %s --split-input-file --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-keep-gathered="units=h.7" 2>&1 | FileCheck %s
// RUN: not zero-opt %s --split-input-file --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-keep-gathered="units=h.0" 2>&1 | FileCheck %s --check-prefix=STAGE2
// RUN: not zero-opt %s --zero-keep-gathered 2>&1 | FileCheck %s --check-prefix=NOSTEP

// A unit that does not exist is named, with the units that do.
// CHECK: error: zero-keep-gathered: unit 'h.7' has no parameter gathered for both forward and backward; units that have: head.weight

// Stage 2 never regathers, so there is nothing to keep.
// STAGE2: error: zero-keep-gathered: unit 'h.0' has no parameter gathered for both forward and backward (this program regathers nothing: only stage 3 does)

// NOSTEP: error: zero-keep-gathered: expected a func.func @train_step (run zero-insert-collectives first)

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w0: tensor<3x5xf32> {nn.param = "h.0.fc.weight"}, %b0: tensor<5xf32> {nn.param = "h.0.fc.bias"},
                   %wh: tensor<5x2xf32> {nn.param = "head.weight"}) -> tensor<f32> {
  %0 = nn.matmul %x, %w0 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %1 = nn.bias_add %0, %b0 : tensor<4x5xf32>, tensor<5xf32>
  %2 = nn.relu %1 : tensor<4x5xf32>
  %3 = nn.matmul %2, %wh : tensor<4x5xf32>, tensor<5x2xf32> -> tensor<4x2xf32>
  %loss = nn.softmax_cross_entropy %3, %labels : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
