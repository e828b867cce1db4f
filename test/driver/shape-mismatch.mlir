// nn.matmul with inner dimensions 3 and 5: the verifier names the violated
// constraint (C1), both shapes, and the op's place; nothing is compiled.
// RUN: rm -f %t
// RUN: not zero-opt %s --stage=3 --world-size=2 -o %t 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not=error:
// RUN: not test -e %t
// The same diagnostic, checked by MLIR's own diagnostic verifier.
// RUN: zero-opt %s --verify-diagnostics -o /dev/null

func.func @forward(%x: tensor<4x3xf32>, %l: tensor<4xi32>,
                   %w: tensor<5x2xf32> {nn.param = "w"}) -> tensor<f32> {
  // CHECK: shape-mismatch.mlir:[[@LINE+2]]:8: error: 'nn.matmul' op (C1) contraction dimensions differ: op(lhs) is 4x3 but op(rhs) is 5x2
  // expected-error @+1 {{'nn.matmul' op (C1) contraction dimensions differ: op(lhs) is 4x3 but op(rhs) is 5x2}}
  %0 = nn.matmul %x, %w : tensor<4x3xf32>, tensor<5x2xf32> -> tensor<4x2xf32>
  %1 = nn.softmax_cross_entropy %0, %l : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  return %1 : tensor<f32>
}
