func.func @forward_ops(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %wt: tensor<3x4xf32>,
                       %b: tensor<3xf32>, %labels: tensor<8xi32>) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %h2 = nn.matmul %x, %wt transpose_rhs : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %s = nn.add %h, %h2 : tensor<8x3xf32>
  %y = nn.bias_add %s, %b : tensor<8x3xf32>, tensor<3xf32>
  %r = nn.relu %y : tensor<8x3xf32>
  %g = nn.gelu %r : tensor<8x3xf32>
  %loss = nn.softmax_cross_entropy %g, %labels {divisor = 32 : i64} : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

func.func @backward_ops(%x: tensor<8x3xf32>, %dy: tensor<8x3xf32>, %labels: tensor<8xi32>,
                        %dloss: tensor<f32>) -> (tensor<3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<4x3xf32>) {
  %db = nn.sum_rows %dy : tensor<8x3xf32> -> tensor<3xf32>
  %dr = nn.relu_grad %x, %dy : tensor<8x3xf32>
  %dg = nn.gelu_grad %x, %dy : tensor<8x3xf32>
  %dl = nn.softmax_cross_entropy_grad %x, %labels, %dloss {divisor = 8 : i64} : tensor<8x3xf32>, tensor<8xi32>, tensor<f32>
  %a = arith.constant dense<1.0> : tensor<8x4xf32>
  %bm = arith.constant dense<2.0> : tensor<3x8xf32>
  %dw = nn.matmul %a, %bm transpose_lhs transpose_rhs : tensor<8x4xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  return %db, %dr, %dg, %dl, %dw : tensor<3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<4x3xf32>
}

func.func @optimizer(%p: tensor<96xf32>, %g: tensor<96xf32>, %m: tensor<96xf32>, %v: tensor<96xf32>,
                     %lr: tensor<f32>, %step: tensor<f32>, %b1: tensor<f32>, %b2: tensor<f32>,
                     %eps: tensor<f32>, %wd: tensor<f32>) -> (tensor<96xf32>, tensor<96xf32>, tensor<96xf32>) {
  %p2, %m2, %v2 = nn.adamw %p, %g, %m, %v, lr = %lr, step = %step,
      beta1 = %b1, beta2 = %b2, eps = %eps, weight_decay = %wd
      : tensor<96xf32>, tensor<96xf32>, tensor<f32>
  return %p2, %m2, %v2 : tensor<96xf32>, tensor<96xf32>, tensor<96xf32>
}

func.func @mixed_precision_optimizer(%master: tensor<96xf32>, %g: tensor<96xbf16>, %m: tensor<96xf32>, %v: tensor<96xf32>,
                                     %lr: tensor<f32>, %step: tensor<f32>, %scale: tensor<f32>) -> tensor<96xbf16> {
  %p2, %m2, %v2 = nn.adamw %master, %g, %m, %v, lr = %lr, step = %step,
      beta1 = %lr, beta2 = %lr, eps = %lr, weight_decay = %lr, grad_scale = %scale : tensor<f32>
      : tensor<96xf32>, tensor<96xbf16>, tensor<f32>
  %p16 = nn.cast %p2 : tensor<96xf32> -> tensor<96xbf16>
  return %p16 : tensor<96xbf16>
}

func.func @fused_linear(%x: tensor<8x4xbf16>, %w: tensor<16x4xbf16>, %b: tensor<16xbf16>,
                        %w2: tensor<16x3xbf16>, %b2: tensor<3xbf16>) -> (tensor<8x16xbf16>, tensor<8x3xbf16>) {
  %pre, %g = nn.matmul_bias_gelu %x, %w, %b transpose_rhs : tensor<8x4xbf16>, tensor<16x4xbf16>, tensor<16xbf16> -> tensor<8x16xbf16>
  %y = nn.matmul_bias %g, %w2, %b2 : tensor<8x16xbf16>, tensor<16x3xbf16>, tensor<3xbf16> -> tensor<8x3xbf16>
  return %pre, %y : tensor<8x16xbf16>, tensor<8x3xbf16>
}
