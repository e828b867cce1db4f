// RUN: zero-opt %s --split-input-file --verify-diagnostics
// One case per labelled constraint of the transformer ops.

func.func @embedding_c1(%ids: tensor<16xi32>, %t: tensor<256x32xf32>) {
  // expected-error @+1 {{'nn.embedding' op (C1) result must be 16x32, got 'tensor<8x32xf32>'}}
  %x = nn.embedding %ids, %t : tensor<16xi32>, tensor<256x32xf32> -> tensor<8x32xf32>
  return
}

// -----

func.func @embedding_grad_c1(%ids: tensor<16xi32>, %dy: tensor<8x32xf32>) {
  // expected-error @+1 {{'nn.embedding_grad' op (C1) result_grad 'tensor<8x32xf32>' must have 16 rows and the columns of the result 'tensor<256x32xf32>'}}
  %d = nn.embedding_grad %ids, %dy : tensor<16xi32>, tensor<8x32xf32> -> tensor<256x32xf32>
  return
}

// -----

func.func @layer_norm_c1(%x: tensor<16x32xf32>, %g: tensor<31xf32>) {
  // expected-error @+1 {{'nn.layer_norm' op (C1) gamma has 31 elements but the input has 32 columns}}
  %y = nn.layer_norm %x, %g, %g {epsilon = 1.0e-05 : f32} : tensor<16x32xf32>, tensor<31xf32>
  return
}

// -----

func.func @rms_norm_c1(%x: tensor<16x32xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'nn.rms_norm' op (C1) gamma has 16 elements but the input has 32 columns}}
  %y = nn.rms_norm %x, %g {epsilon = 1.0e-05 : f32} : tensor<16x32xf32>, tensor<16xf32>
  return
}

// -----

func.func @rope_c1(%x: tensor<16x30xf32>) {
  // expected-error @+1 {{'nn.rope' op (C1) 'tensor<16x30xf32>' does not split into sequences of 8 rows and 4 heads of an even size}}
  %y = nn.rope %x {num_heads = 4 : i64, seq_len = 8 : i64, theta = 1.0e+04 : f32} : tensor<16x30xf32>
  return
}

// -----

// A crash of the mlir fuzz target: zero-lower-to-zrt built a table of
// 2^32 frequencies.
func.func @rope_c4(%x: tensor<4x8589934592xf32>) {
  // expected-error @+1 {{'nn.rope' op (C4) the head dimension must be at most 65536, got 8589934592}}
  %y = nn.rope %x {num_heads = 1 : i64, seq_len = 2 : i64, theta = 1.000000e+04 : f32} : tensor<4x8589934592xf32>
  return
}

// -----

func.func @rope_c2(%x: tensor<16x32xf32>) {
  // expected-error @+1 {{'nn.rope' op (C2) theta must exceed 1, got 1.000000e+00}}
  %y = nn.rope %x {num_heads = 4 : i64, seq_len = 8 : i64, theta = 1.0 : f32} : tensor<16x32xf32>
  return
}

// -----

func.func @rope_c3_kind(%x: tensor<16x32xf32>) {
  // expected-error @+1 {{'nn.rope' op (C3) scaling must be "linear" or "llama3", got "yarn"}}
  %y = nn.rope %x {num_heads = 4 : i64, seq_len = 8 : i64, theta = 1.0e+04 : f32, scaling = "yarn", factor = 2.0 : f32} : tensor<16x32xf32>
  return
}

// -----

func.func @rope_c3_stray_factor(%x: tensor<16x32xf32>) {
  // expected-error @+1 {{'nn.rope' op (C3) no scaling takes no factor}}
  %y = nn.rope %x {num_heads = 4 : i64, seq_len = 8 : i64, theta = 1.0e+04 : f32, factor = 2.0 : f32} : tensor<16x32xf32>
  return
}

// -----

func.func @rope_c3_linear_extra(%x: tensor<16x32xf32>) {
  // expected-error @+1 {{'nn.rope' op (C3) linear scaling takes no low_freq_factor}}
  %y = nn.rope %x {num_heads = 4 : i64, seq_len = 8 : i64, theta = 1.0e+04 : f32, scaling = "linear", factor = 2.0 : f32, low_freq_factor = 1.0 : f32} : tensor<16x32xf32>
  return
}

// -----

func.func @rope_c3_llama3_missing(%x: tensor<16x32xf32>) {
  // expected-error @+1 {{'nn.rope' op (C3) llama3 scaling needs original_max_positions}}
  %y = nn.rope %x {num_heads = 4 : i64, seq_len = 8 : i64, theta = 5.0e+05 : f32, scaling = "llama3", factor = 8.0 : f32, low_freq_factor = 1.0 : f32, high_freq_factor = 4.0 : f32} : tensor<16x32xf32>
  return
}

// -----

func.func @rope_c3_llama3_order(%x: tensor<16x32xf32>) {
  // expected-error @+1 {{'nn.rope' op (C3) llama3 scaling needs 0 < low_freq_factor < high_freq_factor, got 4.000000e+00 and 1.000000e+00}}
  %y = nn.rope %x {num_heads = 4 : i64, seq_len = 8 : i64, theta = 5.0e+05 : f32, scaling = "llama3", factor = 8.0 : f32, low_freq_factor = 4.0 : f32, high_freq_factor = 1.0 : f32, original_max_positions = 64 : i64} : tensor<16x32xf32>
  return
}

// -----

func.func @rope_c3_factor(%x: tensor<16x32xf32>) {
  // expected-error @+1 {{'nn.rope' op (C3) factor must be positive, got 0.000000e+00}}
  %y = nn.rope %x {num_heads = 4 : i64, seq_len = 8 : i64, theta = 1.0e+04 : f32, scaling = "linear", factor = 0.0 : f32} : tensor<16x32xf32>
  return
}

// -----

func.func @attention_c1(%q: tensor<16x32xf32>, %k: tensor<16x16xf32>) {
  // expected-error @+1 {{'nn.attention' op (C1) 4 query heads must divide the 32 query columns and be a multiple of 3 kv heads}}
  %a = nn.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 3 : i64, seq_len = 8 : i64} : tensor<16x32xf32>, tensor<16x16xf32>
  return
}

// -----

func.func @attention_c2_cols(%q: tensor<16x32xf32>, %k: tensor<16x24xf32>) {
  // expected-error @+1 {{'nn.attention' op (C2) key columns must be 2 x 8, got 24}}
  %a = nn.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, seq_len = 8 : i64} : tensor<16x32xf32>, tensor<16x24xf32>
  return
}

// -----

func.func @attention_c2_rows(%q: tensor<16x32xf32>, %k: tensor<16x16xf32>) {
  // expected-error @+1 {{'nn.attention' op (C2) query and key rows (16, 16) must be equal and divide into sequences of 5}}
  %a = nn.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, seq_len = 5 : i64} : tensor<16x32xf32>, tensor<16x16xf32>
  return
}

// -----

func.func @slice_cols_c1(%x: tensor<16x96xf32>) {
  // expected-error @+1 {{'nn.slice_cols' op (C1) columns [80, 112) of 'tensor<16x96xf32>' cannot form 'tensor<16x32xf32>'}}
  %y = nn.slice_cols %x {offset = 80 : i64} : tensor<16x96xf32> -> tensor<16x32xf32>
  return
}

// -----

// A crash of the mlir fuzz target: the offset plus the columns overflowed.
func.func @slice_cols_c1_huge_offset(%x: tensor<16x96xf32>) {
  // expected-error @+1 {{'nn.slice_cols' op (C1) columns [9223372036854775807, 9223372036854775839) of 'tensor<16x96xf32>' cannot form 'tensor<16x32xf32>'}}
  %y = nn.slice_cols %x {offset = 9223372036854775807 : i64} : tensor<16x96xf32> -> tensor<16x32xf32>
  return
}

// -----

func.func @cast_c1(%x: tensor<16x96xf32>) {
  // expected-error @+1 {{'nn.cast' op (C1) cannot change the shape: 'tensor<16x96xf32>' -> 'tensor<96x16xbf16>'}}
  %y = nn.cast %x : tensor<16x96xf32> -> tensor<96x16xbf16>
  return
}

// -----

func.func @mixed_element_types(%a: tensor<8x4xf32>, %b: tensor<4x3xbf16>) {
  // expected-error @+1 {{'nn.matmul' op failed to verify that all of {lhs, rhs, result} have same element type}}
  %c = nn.matmul %a, %b : tensor<8x4xf32>, tensor<4x3xbf16> -> tensor<8x3xf32>
  return
}

// -----

func.func @adamw_c1(%p: tensor<9xf32>, %g: tensor<3x3xbf16>, %lr: tensor<f32>) {
  // expected-error @+1 {{'nn.adamw' op (C1) the gradient 'tensor<3x3xbf16>' must have the shape of the parameter 'tensor<9xf32>'}}
  %a, %b, %c = nn.adamw %p, %g, %p, %p, lr = %lr, step = %lr, beta1 = %lr,
      beta2 = %lr, eps = %lr, weight_decay = %lr
      : tensor<9xf32>, tensor<3x3xbf16>, tensor<f32>
  return
}

// -----

// expected-error @+1 {{argument #0: 'nn.data' must be one of features, labels, tokens, targets, positions, got 'pixels'}}
func.func @data_kind(%x: tensor<4xi32> {nn.data = "pixels"}) {
  return
}
