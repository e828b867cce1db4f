// RUN: zero-opt %s --nn-autodiff --nn-fuse-epilogues | FileCheck %s

// On a training graph (what the stage pipeline fuses): the forward's two
// linear layers fuse, the backward reads the pre-activation for GELU's
// gradient, and autodiff's gradient GEMMs (no bias) stay nn.matmul.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[PRE:.*]], %[[G:.*]] = nn.matmul_bias_gelu %arg0, %arg2, %arg3
// CHECK-NEXT: %[[LOGITS:.*]] = nn.matmul_bias %[[G]], %arg4, %arg5
// CHECK: nn.softmax_cross_entropy_grad %[[LOGITS]]
// CHECK: nn.gelu_grad %[[PRE]]
// CHECK-NOT: nn.bias_add
// CHECK-NOT: nn.gelu %
// CHECK-NOT: matmul_bias
// CHECK: return

func.func @forward(%x: tensor<8x4xf32>, %labels: tensor<8xi32>,
                   %w1: tensor<4x16xf32> {nn.param = "fc1.weight"}, %b1: tensor<16xf32> {nn.param = "fc1.bias"},
                   %w2: tensor<16x3xf32> {nn.param = "fc2.weight"}, %b2: tensor<3xf32> {nn.param = "fc2.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w1 : tensor<8x4xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
  %z = nn.bias_add %h, %b1 : tensor<8x16xf32>, tensor<16xf32>
  %g = nn.gelu %z : tensor<8x16xf32>
  %o = nn.matmul %g, %w2 : tensor<8x16xf32>, tensor<16x3xf32> -> tensor<8x3xf32>
  %logits = nn.bias_add %o, %b2 : tensor<8x3xf32>, tensor<3xf32>
  %loss = nn.softmax_cross_entropy %logits, %labels : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
