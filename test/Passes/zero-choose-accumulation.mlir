// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=3" --nn-autodiff --zero-adamw --zero-placement=stage=1 --zero-insert-collectives --zero-clip-grad-norm \
// RUN:   --zero-choose-accumulation="limit=1GiB options='stage=1 world-size=2 grad-accum=3'" | FileCheck %s --check-prefix=FITS
// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=3" --nn-autodiff --zero-adamw --zero-placement=stage=1 --zero-insert-collectives --zero-clip-grad-norm \
// RUN:   --zero-choose-accumulation="limit=300 options='stage=1 world-size=2 grad-accum=3'" | FileCheck %s --check-prefix=OVER

// The program with local accumulation (predicted peak 372 bytes) fits in
// 1 GiB: local is recorded,
// the module is otherwise unchanged (the trial copy is gone).
// FITS: module attributes {zero.accumulate = "local"}
// FITS-NOT: module
// FITS-NOT: nn.grad_accum
// FITS: func.func @train_step

// Its peak (372 bytes, zero-report's figure) is over 300: sharded.
// OVER: module attributes {zero.accumulate = "sharded"}
// OVER-NOT: nn.grad_accum

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
