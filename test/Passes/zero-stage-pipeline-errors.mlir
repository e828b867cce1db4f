// RUN: zero-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(zero-stage-pipeline{stage=3 world-size=2})' -o /dev/null
// The names the pipeline declares are refused in its input, by the pass
// that declares them; each of these crashed the mlir fuzz target.

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>, %w: tensor<3x5xf32> {nn.param = "w"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
// zero-lower-to-zrt took it for the apply function and read its body.
// expected-error @+1 {{zero-accumulate-gradients: @train_apply already exists}}
func.func private @train_apply()

// -----

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>, %w: tensor<3x5xf32> {nn.param = "w"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
// The calls of zrt_fill would have had other types than this declaration.
// expected-error @+1 {{zero-lower-zrt-to-calls: @zrt_fill is named like a function of the runtime's C ABI, which this pass declares; rename it}}
func.func private @zrt_fill(i32)
