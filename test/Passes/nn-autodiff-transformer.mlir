// RUN: zero-opt %s --nn-autodiff | FileCheck %s

// An attention block with a tied output head: the fused projection's three
// column blocks each send a gradient back (summed), the rotated query's
// gradient is rotated back (with the same base and scaling), and the tied table sums the embedding's and the
// head's gradients.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[TOK:[^:]*]]: tensor<8xi32> {nn.data = "tokens"}
// CHECK-SAME: %[[WTE:[^:]*]]: tensor<16x8xf32> {nn.param = "wte.weight"}
// Forward:
// CHECK: %[[X:.*]] = nn.embedding %[[TOK]], %[[WTE]]
// CHECK: %[[H:.*]] = nn.layer_norm %[[X]]
// CHECK: %[[QKV:.*]] = nn.matmul %[[H]], %[[W:[^ ]*]] :
// CHECK: %[[Q:.*]] = nn.slice_cols %[[QKV]] {offset = 0 : i64}
// CHECK: %[[K:.*]] = nn.slice_cols %[[QKV]] {offset = 8 : i64}
// CHECK: %[[V:.*]] = nn.slice_cols %[[QKV]] {offset = 16 : i64}
// CHECK: %[[QR:.*]] = nn.rope %[[Q]] {factor = 4.000000e+00 : f32, num_heads = 2 : i64
// CHECK: %[[A:.*]] = nn.attention %[[QR]], %[[K]], %[[V]]
// CHECK: %[[Y:.*]] = nn.add %[[X]], %[[A]]
// CHECK: %[[LOGITS:.*]] = nn.matmul %[[Y]], %[[WTE]] transpose_rhs
// Backward, in reverse:
// CHECK: %[[DLOGITS:.*]] = nn.softmax_cross_entropy_grad %[[LOGITS]]
// CHECK: %[[DY:.*]] = nn.matmul %[[DLOGITS]], %[[WTE]] :
// CHECK: %[[DWTE_HEAD:.*]] = nn.matmul %[[DLOGITS]], %[[Y]] transpose_lhs
// CHECK: %[[DQR:.*]], %[[DK:.*]], %[[DV:.*]] = nn.attention_grad %[[QR]], %[[K]], %[[V]], %[[DY]]
// CHECK: %[[DQ:.*]] = nn.rope %[[DQR]] {factor = 4.000000e+00 : f32, inverse, num_heads = 2 : i64, scaling = "linear", seq_len = 4 : i64, theta = 1.000000e+04 : f32}
// CHECK-DAG: nn.slice_cols_grad %[[DQ]] {offset = 0 : i64}
// CHECK-DAG: nn.slice_cols_grad %[[DK]] {offset = 8 : i64}
// CHECK-DAG: nn.slice_cols_grad %[[DV]] {offset = 16 : i64}
// CHECK: %[[DQKV:.*]] = nn.add
// CHECK: nn.matmul %[[H]], %[[DQKV]] transpose_lhs
// CHECK: %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = nn.layer_norm_grad %[[X]]
// CHECK: %[[DXT:.*]] = nn.add %[[DY]], %[[DX]]
// CHECK: %[[DWTE_EMB:.*]] = nn.embedding_grad %[[TOK]], %[[DXT]] : tensor<8xi32>, tensor<8x8xf32> -> tensor<16x8xf32>
// CHECK: %[[DWTE:.*]] = nn.add %[[DWTE_HEAD]], %[[DWTE_EMB]]
// CHECK: return %{{.*}}, %[[DWTE]],
func.func @forward(%tokens: tensor<8xi32> {nn.data = "tokens"}, %targets: tensor<8xi32> {nn.data = "targets"},
                   %wte: tensor<16x8xf32> {nn.param = "wte.weight"},
                   %g: tensor<8xf32> {nn.param = "ln.weight"}, %b: tensor<8xf32> {nn.param = "ln.bias"},
                   %w: tensor<8x24xf32> {nn.param = "attn.weight"}) -> tensor<f32> attributes {nn.seq_len = 4 : i64} {
  %x = nn.embedding %tokens, %wte : tensor<8xi32>, tensor<16x8xf32> -> tensor<8x8xf32>
  %h = nn.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<8x8xf32>, tensor<8xf32>
  %qkv = nn.matmul %h, %w : tensor<8x8xf32>, tensor<8x24xf32> -> tensor<8x24xf32>
  %q = nn.slice_cols %qkv {offset = 0 : i64} : tensor<8x24xf32> -> tensor<8x8xf32>
  %k = nn.slice_cols %qkv {offset = 8 : i64} : tensor<8x24xf32> -> tensor<8x8xf32>
  %v = nn.slice_cols %qkv {offset = 16 : i64} : tensor<8x24xf32> -> tensor<8x8xf32>
  %qr = nn.rope %q {num_heads = 2 : i64, seq_len = 4 : i64, theta = 1.0e+04 : f32, scaling = "linear", factor = 4.0 : f32} : tensor<8x8xf32>
  %a = nn.attention %qr, %k, %v {num_heads = 2 : i64, num_kv_heads = 2 : i64, seq_len = 4 : i64} : tensor<8x8xf32>, tensor<8x8xf32>
  %y = nn.add %x, %a : tensor<8x8xf32>
  %logits = nn.matmul %y, %wte transpose_rhs : tensor<8x8xf32>, tensor<16x8xf32> -> tensor<8x16xf32>
  %loss = nn.softmax_cross_entropy %logits, %targets : tensor<8x16xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
