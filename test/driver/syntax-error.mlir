// A syntax error is reported once, at its file:line:col, with the source line
// and a caret; zero-opt exits non-zero and writes no output file.
// RUN: rm -f %t
// RUN: not zero-opt %s --stage=0 -o %t 2>&1 \
// RUN:   | FileCheck %s --strict-whitespace --implicit-check-not=error: \
// RUN:       --implicit-check-not=note:
// RUN: not test -e %t

// The argument list is missing its `)`: the parser stops at the `->`.
// CHECK: syntax-error.mlir:[[@LINE+3]]:58: error: expected ')'
// CHECK-NEXT: func.func @forward
// CHECK-NEXT: {{^ {57}\^$}}
func.func @forward(%x: tensor<4x3xf32>, %l: tensor<4xi32> -> tensor<f32> {
  %0 = nn.softmax_cross_entropy %x, %l : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  return %0 : tensor<f32>
}
