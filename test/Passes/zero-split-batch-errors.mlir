// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-split-batch=world-size=3

// expected-error @+1 {{zero-split-batch: the batch of data argument #0 has 4 rows, which do not divide by world-size 3}}
func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>) -> tensor<f32> {
  %loss = nn.softmax_cross_entropy %x, %labels : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// expected-error @+1 {{zero-split-batch: data argument #1 must be a statically shaped tensor with a batch dimension, got 'tensor<f32>'}}
func.func @forward(%x: tensor<3x3xf32>, %scale: tensor<f32>) -> tensor<f32> {
  return %scale : tensor<f32>
}

// -----

// expected-error @+1 {{zero-split-batch: expected a func.func @forward (the model's forward)}}
module {
  func.func @model(%x: tensor<3x3xf32>) {
    return
  }
}

// -----

func.func @forward(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{'arith.addf' op cannot be split by zero-split-batch: no rule for its result shape}}
  %y = arith.addf %x, %x : tensor<3x3xf32>
  return %y : tensor<3x3xf32>
}

// -----

// Ranks split whole sequences, not tokens: 2 sequences of 4 tokens do not
// split over 3 ranks.
// expected-error @+1 {{zero-split-batch: data argument #0 holds 8 tokens, which are not whole sequences of 4 for each of world-size 3 ranks}}
func.func @forward(%tokens: tensor<8xi32> {nn.data = "tokens"}, %targets: tensor<8xi32> {nn.data = "targets"}) -> tensor<f32> attributes {nn.seq_len = 4 : i64} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{zero-split-batch: the module already declares its data-parallel group; split the batch once}}
zero.group @dp world_size(3)

func.func @forward(%x: tensor<3x3xf32>, %labels: tensor<3xi32>) -> tensor<f32> {
  %loss = nn.softmax_cross_entropy %x, %labels : tensor<3x3xf32>, tensor<3xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A crash of the mlir fuzz target: a @forward without a body crashed the pass.
// expected-error @+1 {{zero-split-batch: @forward is a declaration; expected a func.func with a body (the model's forward)}}
func.func private @forward(tensor<3x3xf32>, tensor<3xi32>) -> tensor<f32>

// -----

// A crash of the mlir fuzz target: sequence length times world size overflowed.
// expected-error @+1 {{zero-split-batch: data argument #0 holds 8 tokens, which are not whole sequences of 4611686018427387904 for each of world-size 3 ranks}}
func.func @forward(%tokens: tensor<8xi32> {nn.data = "tokens"}, %targets: tensor<8xi32> {nn.data = "targets"}) -> tensor<f32> attributes {nn.seq_len = 4611686018427387904 : i64} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// A crash of the mlir fuzz target: zero-placement and the collectives need a
// static float tensor for every parameter.
// expected-error @+1 {{zero-split-batch: parameter argument #1 ('w') must be a statically shaped f32 or bf16 tensor, got 'tensor<?x5xf32>'}}
func.func @forward(%x: tensor<3x3xf32>, %w: tensor<?x5xf32> {nn.param = "w"}) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// A crash of the mlir fuzz target: nn-autodiff cast it to a tensor.
// expected-error @+1 {{zero-split-batch: parameter argument #1 ('w') must be a statically shaped f32 or bf16 tensor, got 'i32'}}
func.func @forward(%x: tensor<3x3xf32>, %w: i32 {nn.param = "w"}) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// A crash of the mlir fuzz target: the program description read the
// features' second dimension.
// expected-error @+1 {{zero-split-batch: data argument #0 ('features') must be an f32 or bf16 matrix, got 'tensor<3xf32>'}}
func.func @forward(%x: tensor<3xf32> {nn.data = "features"}) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{zero-split-batch: data argument #0 ('tokens') must be an i32 vector, got 'tensor<6x4xi32>'}}
func.func @forward(%t: tensor<6x4xi32> {nn.data = "tokens"}) -> tensor<f32> attributes {nn.seq_len = 2 : i64} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// A crash of the mlir fuzz target: the byte counts of the later passes
// overflowed.
// expected-error @+1 {{zero-split-batch: argument #2 'tensor<20x461168601842738790xf32>' holds more than 281474976710656 bytes, the address space of a rank}}
func.func @forward(%x: tensor<3x20xf32>, %labels: tensor<3xi32>,
                   %w: tensor<20x461168601842738790xf32> {nn.param = "w"}) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @forward(%x: tensor<16777216x1xf32>, %w: tensor<1x16777216xf32> {nn.param = "w"}) -> tensor<f32> {
  // expected-error @+1 {{'nn.matmul' op cannot be split by zero-split-batch: its result 'tensor<16777216x16777216xf32>' holds more than 281474976710656 bytes, the address space of a rank}}
  %h = nn.matmul %x, %w : tensor<16777216x1xf32>, tensor<1x16777216xf32> -> tensor<16777216x16777216xf32>
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}
