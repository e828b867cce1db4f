// An op the nn dialect does not define is named, at its place.
// RUN: not zero-opt %s --stage=0 -o %t 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=error:

// CHECK: unknown-op.mlir:[[@LINE+3]]:8: error: custom op 'nn.frobnicate' is unknown
func.func @forward(%x: tensor<4x3xf32>, %l: tensor<4xi32>,
                   %w: tensor<3x3xf32> {nn.param = "w"}) -> tensor<f32> {
  %0 = nn.frobnicate %x : tensor<4x3xf32>
  %1 = nn.softmax_cross_entropy %0, %l : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  return %1 : tensor<f32>
}
