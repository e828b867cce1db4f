// RUN: zero-opt %s | FileCheck %s
// RUN: zero-opt %s | zero-opt | FileCheck %s

// CHECK-LABEL: func.func @gpt2_ops
func.func @gpt2_ops(%tokens: tensor<16xi32>, %wte: tensor<256x32xbf16>, %g: tensor<32xbf16>,
                    %b: tensor<32xbf16>, %w: tensor<32x96xbf16>) -> tensor<16x32xbf16> {
  // CHECK: nn.embedding %{{.*}}, %{{.*}} : tensor<16xi32>, tensor<256x32xbf16> -> tensor<16x32xbf16>
  %x = nn.embedding %tokens, %wte : tensor<16xi32>, tensor<256x32xbf16> -> tensor<16x32xbf16>
  // CHECK: nn.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999974E-6 : f32} : tensor<16x32xbf16>, tensor<32xbf16>
  %h = nn.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<16x32xbf16>, tensor<32xbf16>
  %qkv = nn.matmul %h, %w : tensor<16x32xbf16>, tensor<32x96xbf16> -> tensor<16x96xbf16>
  // CHECK: nn.slice_cols %{{.*}} {offset = 32 : i64} : tensor<16x96xbf16> -> tensor<16x32xbf16>
  %q = nn.slice_cols %qkv {offset = 0 : i64} : tensor<16x96xbf16> -> tensor<16x32xbf16>
  %k = nn.slice_cols %qkv {offset = 32 : i64} : tensor<16x96xbf16> -> tensor<16x32xbf16>
  %v = nn.slice_cols %qkv {offset = 64 : i64} : tensor<16x96xbf16> -> tensor<16x32xbf16>
  // CHECK: nn.attention %{{.*}}, %{{.*}}, %{{.*}} {num_heads = 4 : i64, num_kv_heads = 4 : i64, seq_len = 8 : i64} : tensor<16x32xbf16>, tensor<16x32xbf16>
  %a = nn.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, seq_len = 8 : i64} : tensor<16x32xbf16>, tensor<16x32xbf16>
  return %a : tensor<16x32xbf16>
}

// CHECK-LABEL: func.func @llama_ops
func.func @llama_ops(%x: tensor<16x32xf32>, %g: tensor<32xf32>, %kv: tensor<16x16xf32>,
                     %gate: tensor<16x88xf32>, %up: tensor<16x88xf32>) -> (tensor<16x32xf32>, tensor<16x88xf32>) {
  // CHECK: nn.rms_norm %{{.*}}, %{{.*}} {epsilon = 9.99999974E-6 : f32} : tensor<16x32xf32>, tensor<32xf32>
  %h = nn.rms_norm %x, %g {epsilon = 1.0e-05 : f32} : tensor<16x32xf32>, tensor<32xf32>
  // CHECK: nn.rope %{{.*}} {num_heads = 4 : i64, seq_len = 8 : i64, theta = 1.000000e+04 : f32} : tensor<16x32xf32>
  %q = nn.rope %h {num_heads = 4 : i64, seq_len = 8 : i64, theta = 1.0e+04 : f32} : tensor<16x32xf32>
  // CHECK: nn.rope %{{.*}} {inverse, num_heads = 2 : i64, seq_len = 8 : i64, theta = 1.000000e+04 : f32} : tensor<16x16xf32>
  %k = nn.rope %kv {inverse, num_heads = 2 : i64, seq_len = 8 : i64, theta = 1.0e+04 : f32} : tensor<16x16xf32>
  // CHECK: nn.rope %{{.*}} {factor = 2.000000e+00 : f32, num_heads = 4 : i64, scaling = "linear", seq_len = 8 : i64, theta = 1.000000e+04 : f32} : tensor<16x32xf32>
  %ql = nn.rope %h {num_heads = 4 : i64, seq_len = 8 : i64, theta = 1.0e+04 : f32, scaling = "linear", factor = 2.0 : f32} : tensor<16x32xf32>
  // CHECK: nn.rope %{{.*}} {factor = 8.000000e+00 : f32, high_freq_factor = 4.000000e+00 : f32, low_freq_factor = 1.000000e+00 : f32, num_heads = 4 : i64, original_max_positions = 8192 : i64, scaling = "llama3", seq_len = 8 : i64, theta = 5.000000e+05 : f32} : tensor<16x32xf32>
  %q3 = nn.rope %h {num_heads = 4 : i64, seq_len = 8 : i64, theta = 5.0e+05 : f32, scaling = "llama3", factor = 8.0 : f32, low_freq_factor = 1.0 : f32, high_freq_factor = 4.0 : f32, original_max_positions = 8192 : i64} : tensor<16x32xf32>
  // Grouped-query attention: 4 query heads read 2 kv heads of 8.
  // CHECK: nn.attention %{{.*}}, %{{.*}}, %{{.*}} {num_heads = 4 : i64, num_kv_heads = 2 : i64, seq_len = 8 : i64} : tensor<16x32xf32>, tensor<16x16xf32>
  %a = nn.attention %q, %k, %kv {num_heads = 4 : i64, num_kv_heads = 2 : i64, seq_len = 8 : i64} : tensor<16x32xf32>, tensor<16x16xf32>
  // CHECK: nn.swiglu %{{.*}}, %{{.*}} : tensor<16x88xf32>
  %s = nn.swiglu %gate, %up : tensor<16x88xf32>
  return %a, %s : tensor<16x32xf32>, tensor<16x88xf32>
}

// CHECK-LABEL: func.func @backward_and_clipping
func.func @backward_and_clipping(%x: tensor<16x32xf32>, %g: tensor<32xf32>, %dy: tensor<16x32xf32>,
                                 %ids: tensor<16xi32>, %max: tensor<f32>) -> tensor<f32> {
  // CHECK: nn.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999974E-6 : f32} : tensor<16x32xf32>, tensor<32xf32>
  %dx, %dg, %db = nn.layer_norm_grad %x, %g, %dy {epsilon = 1.0e-05 : f32} : tensor<16x32xf32>, tensor<32xf32>
  // CHECK: nn.rms_norm_grad
  %dx2, %dg2 = nn.rms_norm_grad %x, %g, %dy {epsilon = 1.0e-05 : f32} : tensor<16x32xf32>, tensor<32xf32>
  // CHECK: nn.attention_grad
  %dq, %dk, %dv = nn.attention_grad %x, %x, %x, %dy {num_heads = 4 : i64, num_kv_heads = 4 : i64, seq_len = 8 : i64} : tensor<16x32xf32>, tensor<16x32xf32>
  // CHECK: nn.embedding_grad %{{.*}}, %{{.*}} : tensor<16xi32>, tensor<16x32xf32> -> tensor<100x32xf32>
  %dt = nn.embedding_grad %ids, %dx : tensor<16xi32>, tensor<16x32xf32> -> tensor<100x32xf32>
  // CHECK: nn.slice_cols_grad %{{.*}} {offset = 32 : i64} : tensor<16x32xf32> -> tensor<16x96xf32>
  %ds = nn.slice_cols_grad %dq {offset = 32 : i64} : tensor<16x32xf32> -> tensor<16x96xf32>
  // CHECK: nn.cast %{{.*}} : tensor<16x96xf32> -> tensor<16x96xbf16>
  %c = nn.cast %ds : tensor<16x96xf32> -> tensor<16x96xbf16>
  // CHECK: %[[S:.*]] = nn.sum_squares %{{.*}} : tensor<16x96xbf16> -> tensor<f32>
  %s = nn.sum_squares %c : tensor<16x96xbf16> -> tensor<f32>
  // CHECK: nn.sum_squares %{{.*}} of "h.0.mlp.c_fc.weight" : tensor<16x96xbf16> -> tensor<f32>
  %named = nn.sum_squares %c of "h.0.mlp.c_fc.weight" : tensor<16x96xbf16> -> tensor<f32>
  // CHECK: nn.clip_coefficient %[[S]], %{{.*}} : tensor<f32>
  %coef = nn.clip_coefficient %s, %max : tensor<f32>
  return %coef : tensor<f32>
}
