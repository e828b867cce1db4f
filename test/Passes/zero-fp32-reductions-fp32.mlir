// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-clip-grad-norm --zero-fp32-reductions | FileCheck %s

// A float32 model: nothing is bfloat16, so nothing changes (no cast).
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: nn.cast
// CHECK: zero.reduce_scatter %{{.*}} over @dp : tensor<3x5xf32> -> tensor<8xf32>
// CHECK-NOT: nn.cast

func.func @forward(%x: tensor<8x3xf32>, %labels: tensor<8xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<8x3xf32>, tensor<3x5xf32> -> tensor<8x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<8x5xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
