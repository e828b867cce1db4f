// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-lower-to-zrt

// expected-error @+1 {{zero-lower-to-zrt: expected a func.func @train_step (run zero-insert-collectives first)}}
module {
}

// -----

// expected-error @+1 {{zero-lower-to-zrt: argument #0 ('tensor<4x3x2xf32>') is neither state nor data the runtime can feed (a float feature matrix or an int32 label vector)}}
func.func @train_step(%x: tensor<4x3x2xf32>) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @train_step(%x: tensor<4x3xf32>, %labels: tensor<4xi32>) -> tensor<f32> {
  %loss = nn.softmax_cross_entropy %x, %labels : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  // expected-error @+1 {{'arith.addf' op cannot be lowered to the runtime: no zrt kernel implements it}}
  %l2 = arith.addf %loss, %loss : tensor<f32>
  return %l2 : tensor<f32>
}

// -----

func.func @train_step(%x: tensor<4x3xf32>, %labels: tensor<4xi32>) -> tensor<f32> {
  %loss = nn.softmax_cross_entropy %x, %labels : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  // expected-error @+1 {{'arith.constant' op cannot be lowered to the runtime: only float splat tensor constants and zero exact accumulators are supported}}
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %loss : tensor<f32>
}

// -----

// A crash of the mlir fuzz target: an apply function without a body.
// expected-error @+1 {{zero-lower-to-zrt: @train_apply is a declaration; expected a func.func with a body}}
func.func private @train_apply()
func.func @train_step(%x: tensor<4x3xf32>, %labels: tensor<4xi32>) -> tensor<f32> {
  %loss = nn.softmax_cross_entropy %x, %labels : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
