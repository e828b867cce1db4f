// RUN: zero-opt %s --nn-fuse-epilogues --split-input-file | FileCheck %s

// A linear layer becomes one op; the transpose flags carry over.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>, %[[W:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK-NEXT: %[[Y:.*]] = nn.matmul_bias %[[X]], %[[W]], %[[B]] transpose_rhs : tensor<8x4xf32>, tensor<3x4xf32>, tensor<3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @linear(%x: tensor<8x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3xf32>) -> tensor<8x3xf32> {
  %h = nn.matmul %x, %w transpose_rhs : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %y = nn.bias_add %h, %b : tensor<8x3xf32>, tensor<3xf32>
  return %y : tensor<8x3xf32>
}

// -----

// Linear + GELU: the GELU's users read the fused result, the sum's other
// users (GELU's gradient) the pre-activation. The fused op stands where the
// sum stood, ahead of an op that came between the sum and the GELU.
// CHECK-LABEL: func.func @linear_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xbf16>, %[[W:.*]]: tensor<4x16xbf16>, %[[B:.*]]: tensor<16xbf16>, %[[DY:.*]]: tensor<8x16xbf16>)
// CHECK-NEXT: %[[PRE:.*]], %[[G:.*]] = nn.matmul_bias_gelu %[[X]], %[[W]], %[[B]] : tensor<8x4xbf16>, tensor<4x16xbf16>, tensor<16xbf16> -> tensor<8x16xbf16>
// CHECK-NEXT: %[[R:.*]] = nn.relu %[[DY]]
// CHECK-NEXT: %[[DX:.*]] = nn.gelu_grad %[[PRE]], %[[R]]
// CHECK-NEXT: return %[[G]], %[[DX]]
// CHECK-NOT: nn.gelu
func.func @linear_gelu(%x: tensor<8x4xbf16>, %w: tensor<4x16xbf16>, %b: tensor<16xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8x16xbf16>) {
  %h = nn.matmul %x, %w : tensor<8x4xbf16>, tensor<4x16xbf16> -> tensor<8x16xbf16>
  %z = nn.bias_add %h, %b : tensor<8x16xbf16>, tensor<16xbf16>
  %r = nn.relu %dy : tensor<8x16xbf16>
  %g = nn.gelu %z : tensor<8x16xbf16>
  %dz = nn.gelu_grad %z, %r : tensor<8x16xbf16>
  return %g, %dz : tensor<8x16xbf16>, tensor<8x16xbf16>
}

// -----

// Left alone: a product that is also read elsewhere (the fused GEMM would
// never write it), a sum of something other than a matmul, and a ReLU,
// which cuBLASLt's bias epilogue does not fuse here.
// CHECK-LABEL: func.func @not_fused
// CHECK: %[[H:.*]] = nn.matmul
// CHECK-NEXT: nn.bias_add %[[H]]
// CHECK-NEXT: %[[A:.*]] = nn.add
// CHECK-NEXT: nn.bias_add %[[A]]
// CHECK-NEXT: %[[Y:.*]] = nn.matmul_bias
// CHECK-NEXT: nn.relu %[[Y]]
// CHECK-NOT: matmul_bias
func.func @not_fused(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %h = nn.matmul %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %y = nn.bias_add %h, %b : tensor<8x4xf32>, tensor<4xf32>
  %a = nn.add %x, %x : tensor<8x4xf32>
  %ya = nn.bias_add %a, %b : tensor<8x4xf32>, tensor<4xf32>
  %h2 = nn.matmul %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %y2 = nn.bias_add %h2, %b : tensor<8x4xf32>, tensor<4xf32>
  %r = nn.relu %y2 : tensor<8x4xf32>
  return %h, %y, %ya, %r : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
