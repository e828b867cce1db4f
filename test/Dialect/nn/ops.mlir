// RUN: zero-opt %s | FileCheck %s
// Round trip: what the parser reads, the printer writes back unchanged, and
// printing twice gives the same text.
// RUN: zero-opt %s | zero-opt | FileCheck %s

// CHECK-LABEL: func.func @forward_ops
func.func @forward_ops(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %wt: tensor<3x4xf32>,
                       %b: tensor<3xf32>, %labels: tensor<8xi32>) -> tensor<f32> {
  // CHECK: nn.matmul %{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %h = nn.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  // CHECK: nn.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %h2 = nn.matmul %x, %wt transpose_rhs : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  // CHECK: nn.add %{{.*}}, %{{.*}} : tensor<8x3xf32>
  %s = nn.add %h, %h2 : tensor<8x3xf32>
  // CHECK: nn.bias_add %{{.*}}, %{{.*}} : tensor<8x3xf32>, tensor<3xf32>
  %y = nn.bias_add %s, %b : tensor<8x3xf32>, tensor<3xf32>
  // CHECK: nn.relu %{{.*}} : tensor<8x3xf32>
  %r = nn.relu %y : tensor<8x3xf32>
  // CHECK: nn.gelu %{{.*}} : tensor<8x3xf32>
  %g = nn.gelu %r : tensor<8x3xf32>
  // CHECK: nn.softmax_cross_entropy %{{.*}}, %{{.*}} {divisor = 32 : i64} : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  %loss = nn.softmax_cross_entropy %g, %labels {divisor = 32 : i64} : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @backward_ops
func.func @backward_ops(%x: tensor<8x3xf32>, %dy: tensor<8x3xf32>, %labels: tensor<8xi32>,
                        %dloss: tensor<f32>) -> (tensor<3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<4x3xf32>) {
  // CHECK: nn.sum_rows %{{.*}} : tensor<8x3xf32> -> tensor<3xf32>
  %db = nn.sum_rows %dy : tensor<8x3xf32> -> tensor<3xf32>
  // CHECK: nn.relu_grad %{{.*}}, %{{.*}} : tensor<8x3xf32>
  %dr = nn.relu_grad %x, %dy : tensor<8x3xf32>
  // CHECK: nn.gelu_grad %{{.*}}, %{{.*}} : tensor<8x3xf32>
  %dg = nn.gelu_grad %x, %dy : tensor<8x3xf32>
  // CHECK: nn.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} {divisor = 8 : i64} : tensor<8x3xf32>, tensor<8xi32>, tensor<f32>
  %dl = nn.softmax_cross_entropy_grad %x, %labels, %dloss {divisor = 8 : i64} : tensor<8x3xf32>, tensor<8xi32>, tensor<f32>
  // CHECK: nn.matmul %{{.*}}, %{{.*}} transpose_lhs transpose_rhs : tensor<8x4xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %a = arith.constant dense<1.0> : tensor<8x4xf32>
  %bm = arith.constant dense<2.0> : tensor<3x8xf32>
  %dw = nn.matmul %a, %bm transpose_lhs transpose_rhs : tensor<8x4xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  return %db, %dr, %dg, %dl, %dw : tensor<3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @optimizer
func.func @optimizer(%p: tensor<96xf32>, %g: tensor<96xf32>, %m: tensor<96xf32>, %v: tensor<96xf32>,
                     %lr: tensor<f32>, %step: tensor<f32>, %b1: tensor<f32>, %b2: tensor<f32>,
                     %eps: tensor<f32>, %wd: tensor<f32>) -> (tensor<96xf32>, tensor<96xf32>, tensor<96xf32>) {
  // CHECK: nn.adamw %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, lr = %{{.*}}, step = %{{.*}}, beta1 = %{{.*}}, beta2 = %{{.*}}, eps = %{{.*}}, weight_decay = %{{.*}} : tensor<96xf32>, tensor<96xf32>, tensor<f32>
  %p2, %m2, %v2 = nn.adamw %p, %g, %m, %v, lr = %lr, step = %step,
      beta1 = %b1, beta2 = %b2, eps = %eps, weight_decay = %wd
      : tensor<96xf32>, tensor<96xf32>, tensor<f32>
  return %p2, %m2, %v2 : tensor<96xf32>, tensor<96xf32>, tensor<96xf32>
}

// Lion: one moment, a bfloat16 gradient scaled by the clipping coefficient.
// CHECK-LABEL: func.func @lion
func.func @lion(%p: tensor<96xf32>, %g: tensor<96xbf16>, %m: tensor<96xf32>,
                %lr: tensor<f32>, %b1: tensor<f32>, %b2: tensor<f32>,
                %wd: tensor<f32>, %scale: tensor<f32>) -> (tensor<96xf32>, tensor<96xf32>) {
  // CHECK: nn.lion %{{.*}}, %{{.*}}, %{{.*}}, lr = %{{.*}}, beta1 = %{{.*}}, beta2 = %{{.*}}, weight_decay = %{{.*}}, grad_scale = %{{.*}} : tensor<f32> : tensor<96xf32>, tensor<96xbf16>, tensor<f32>
  %p2, %m2 = nn.lion %p, %g, %m, lr = %lr, beta1 = %b1, beta2 = %b2,
      weight_decay = %wd, grad_scale = %scale : tensor<f32>
      : tensor<96xf32>, tensor<96xbf16>, tensor<f32>
  return %p2, %m2 : tensor<96xf32>, tensor<96xf32>
}

// Mixed precision: a bfloat16 gradient updates the float32 master, scaled
// by the clipping coefficient; the bfloat16 parameter is cast from it.
// CHECK-LABEL: func.func @mixed_precision_optimizer
func.func @mixed_precision_optimizer(%master: tensor<96xf32>, %g: tensor<96xbf16>, %m: tensor<96xf32>, %v: tensor<96xf32>,
                                     %lr: tensor<f32>, %step: tensor<f32>, %scale: tensor<f32>) -> tensor<96xbf16> {
  // CHECK: %[[NEW:.*]], %{{.*}}, %{{.*}} = nn.adamw %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, lr = %{{.*}}, step = %{{.*}}, beta1 = %{{.*}}, beta2 = %{{.*}}, eps = %{{.*}}, weight_decay = %{{.*}}, grad_scale = %{{.*}} : tensor<f32> : tensor<96xf32>, tensor<96xbf16>, tensor<f32>
  %p2, %m2, %v2 = nn.adamw %master, %g, %m, %v, lr = %lr, step = %step,
      beta1 = %lr, beta2 = %lr, eps = %lr, weight_decay = %lr, grad_scale = %scale : tensor<f32>
      : tensor<96xf32>, tensor<96xbf16>, tensor<f32>
  // CHECK: nn.cast %[[NEW]] : tensor<96xf32> -> tensor<96xbf16>
  %p16 = nn.cast %p2 : tensor<96xf32> -> tensor<96xbf16>
  return %p16 : tensor<96xbf16>
}

// The fused linear layers of nn-fuse-epilogues.
// CHECK-LABEL: func.func @fused_linear
func.func @fused_linear(%x: tensor<8x4xbf16>, %w: tensor<16x4xbf16>, %b: tensor<16xbf16>,
                        %w2: tensor<16x3xbf16>, %b2: tensor<3xbf16>) -> (tensor<8x16xbf16>, tensor<8x3xbf16>) {
  // CHECK: %[[PRE:.*]], %[[G:.*]] = nn.matmul_bias_gelu %{{.*}}, %{{.*}}, %{{.*}} transpose_rhs : tensor<8x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16> -> tensor<8x16xbf16>
  %pre, %g = nn.matmul_bias_gelu %x, %w, %b transpose_rhs : tensor<8x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16> -> tensor<8x16xbf16>
  // CHECK: nn.matmul_bias %[[G]], %{{.*}}, %{{.*}} : tensor<8x16xbf16>, tensor<16x3xbf16>, tensor<3xbf16> -> tensor<8x3xbf16>
  %y = nn.matmul_bias %g, %w2, %b2 : tensor<8x16xbf16>, tensor<16x3xbf16>, tensor<3xbf16> -> tensor<8x3xbf16>
  return %pre, %y : tensor<8x16xbf16>, tensor<8x3xbf16>
}
