// RUN: zero-opt %s --split-input-file --verify-diagnostics
// One case per labelled constraint of each nn op (see docs/NNDialect.md).

func.func @matmul_c1(%a: tensor<8x4xf32>, %b: tensor<5x3xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{'nn.matmul' op (C1) contraction dimensions differ: op(lhs) is 8x4 but op(rhs) is 5x3}}
  %c = nn.matmul %a, %b : tensor<8x4xf32>, tensor<5x3xf32> -> tensor<8x3xf32>
  return %c : tensor<8x3xf32>
}

// -----

func.func @matmul_c1_transposed(%a: tensor<8x4xf32>, %b: tensor<4x3xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{(C1) contraction dimensions differ: op(lhs) is 8x4 but op(rhs) is 3x4}}
  %c = nn.matmul %a, %b transpose_rhs : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x4xf32>
  return %c : tensor<8x4xf32>
}

// -----

func.func @matmul_c2(%a: tensor<8x4xf32>, %b: tensor<4x3xf32>) -> tensor<8x5xf32> {
  // expected-error @+1 {{'nn.matmul' op (C2) result must be 8x3, got 'tensor<8x5xf32>'}}
  %c = nn.matmul %a, %b : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x5xf32>
  return %c : tensor<8x5xf32>
}

// -----

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit float or bfloat16 type values}}
  %c = nn.matmul %a, %b : tensor<8xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  return
}

// -----

func.func @bias_add_c1(%x: tensor<8x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'nn.bias_add' op (C1) bias has 4 elements but the input has 3 columns}}
  %y = nn.bias_add %x, %b : tensor<8x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @sum_rows_c1(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{'nn.sum_rows' op (C1) result has 8 elements but the input has 3 columns}}
  %y = nn.sum_rows %x : tensor<8x3xf32> -> tensor<8xf32>
  return
}

// -----

// expected-note @+1 {{prior use here}}
func.func @add_types(%a: tensor<8x3xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{use of value '%b' expects different type than prior uses}}
  %y = nn.add %a, %b : tensor<8x3xf32>
  return
}

// -----

func.func @softmax_cross_entropy_c1(%logits: tensor<8x10xf32>, %labels: tensor<4xi32>) {
  // expected-error @+1 {{'nn.softmax_cross_entropy' op (C1) expected one label per row of logits (8), got 4}}
  %l = nn.softmax_cross_entropy %logits, %labels : tensor<8x10xf32>, tensor<4xi32> -> tensor<f32>
  return
}

// -----

func.func @softmax_cross_entropy_c2(%logits: tensor<8x10xf32>, %labels: tensor<8xi32>) {
  // expected-error @+1 {{'nn.softmax_cross_entropy' op (C2) divisor must be positive, got 0}}
  %l = nn.softmax_cross_entropy %logits, %labels {divisor = 0 : i64} : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  return
}

// -----

func.func @softmax_cross_entropy_labels(%logits: tensor<8x10xf32>, %labels: tensor<8xf32>) {
  // expected-error @+1 {{operand #1 must be 1D tensor of 32-bit signless integer values}}
  %l = nn.softmax_cross_entropy %logits, %labels : tensor<8x10xf32>, tensor<8xf32> -> tensor<f32>
  return
}

// -----

func.func @softmax_cross_entropy_grad_c1(%logits: tensor<8x10xf32>, %labels: tensor<7xi32>, %d: tensor<f32>) {
  // expected-error @+1 {{'nn.softmax_cross_entropy_grad' op (C1) expected one label per row of logits (8), got 7}}
  %g = nn.softmax_cross_entropy_grad %logits, %labels, %d {divisor = 8 : i64} : tensor<8x10xf32>, tensor<7xi32>, tensor<f32>
  return
}

// -----

func.func @adamw_hyper_type(%p: tensor<9xf32>, %lr: tensor<f32>, %b1: tensor<1xf32>) {
  // The custom form gives all six scalars one type; the generic one can not.
  // expected-error @+1 {{'nn.adamw' op operand #6 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %a, %b, %c = "nn.adamw"(%p, %p, %p, %p, %lr, %lr, %b1, %lr, %lr, %lr)
      {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0>}
      : (tensor<9xf32>, tensor<9xf32>, tensor<9xf32>, tensor<9xf32>, tensor<f32>, tensor<f32>,
         tensor<1xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<9xf32>, tensor<9xf32>, tensor<9xf32>)
  return
}

// -----

func.func @unknown_op(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{custom op 'nn.frobnicate' is unknown}}
  %y = nn.frobnicate %x : tensor<8x3xf32>
  return
}

// -----

// expected-error @+1 {{argument #0: 'nn.param' must be a non-empty string, got 3 : i64}}
func.func @param_name(%w: tensor<4xf32> {nn.param = 3 : i64}) {
  return
}

// -----

// expected-error @+1 {{argument #0: unknown nn argument attribute 'nn.parameter'}}
func.func @param_typo(%w: tensor<4xf32> {nn.parameter = "w"}) {
  return
}

// -----

// A crash of the mlir fuzz target: zero-split-batch divided the rows by it.
// expected-error @+1 {{'func.func' op attribute 'nn.seq_len' must be a positive integer (tokens per sequence), got 0 : i64}}
func.func @seq_len_zero(%tokens: tensor<8xi32> {nn.data = "tokens"}) attributes {nn.seq_len = 0 : i64} {
  return
}

// -----

func.func @matmul_bias_c1(%a: tensor<8x4xf32>, %b: tensor<5x3xf32>, %bias: tensor<3xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{'nn.matmul_bias' op (C1) contraction dimensions differ: op(lhs) is 8x4 but op(rhs) is 5x3}}
  %c = nn.matmul_bias %a, %b, %bias : tensor<8x4xf32>, tensor<5x3xf32>, tensor<3xf32> -> tensor<8x3xf32>
  return %c : tensor<8x3xf32>
}

// -----

func.func @matmul_bias_c2(%a: tensor<8x4xf32>, %b: tensor<4x3xf32>, %bias: tensor<3xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{'nn.matmul_bias' op (C2) result must be 8x3, got 'tensor<3x8xf32>'}}
  %c = nn.matmul_bias %a, %b, %bias : tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32> -> tensor<3x8xf32>
  return %c : tensor<3x8xf32>
}

// -----

func.func @matmul_bias_c3(%a: tensor<8x4xf32>, %b: tensor<4x3xf32>, %bias: tensor<4xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{'nn.matmul_bias' op (C3) bias has 4 elements but the result has 3 columns}}
  %c = nn.matmul_bias %a, %b, %bias : tensor<8x4xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<8x3xf32>
  return %c : tensor<8x3xf32>
}

// -----

func.func @matmul_bias_gelu_c3(%a: tensor<8x4xf32>, %b: tensor<4x3xf32>, %bias: tensor<5xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{'nn.matmul_bias_gelu' op (C3) bias has 5 elements but the result has 3 columns}}
  %pre, %c = nn.matmul_bias_gelu %a, %b, %bias : tensor<8x4xf32>, tensor<4x3xf32>, tensor<5xf32> -> tensor<8x3xf32>
  return %c : tensor<8x3xf32>
}

// -----

func.func @matmul_bias_element_types(%a: tensor<8x4xbf16>, %b: tensor<4x3xbf16>, %bias: tensor<3xf32>) -> tensor<8x3xbf16> {
  // expected-error @+1 {{'nn.matmul_bias' op failed to verify that all of {lhs, rhs, bias, result} have same element type}}
  %c = nn.matmul_bias %a, %b, %bias : tensor<8x4xbf16>, tensor<4x3xbf16>, tensor<3xf32> -> tensor<8x3xbf16>
  return %c : tensor<8x3xbf16>
}

// -----

func.func @lion_grad_shape(%p: tensor<9xf32>, %g: tensor<3x3xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'nn.lion' op (C1) the gradient 'tensor<3x3xf32>' must have the shape of the parameter 'tensor<9xf32>'}}
  %a, %b = nn.lion %p, %g, %p, lr = %lr, beta1 = %lr, beta2 = %lr, weight_decay = %lr
      : tensor<9xf32>, tensor<3x3xf32>, tensor<f32>
  return
}
