// RUN: zero-opt %s --split-input-file --verify-diagnostics --nn-autodiff --nn-recompute=units=h.0
// RUN: not zero-opt %S/Inputs/recompute-chain.mlir --nn-recompute=units=blocks 2>&1 | FileCheck %s --check-prefix=NOSTEP
// RUN: not zero-opt --model=mlp --stage=0 --recompute=blocks -o %t 2>&1 | FileCheck %s --check-prefix=BLOCKS

// NOSTEP: error: nn-recompute: expected a func.func @train_step (run nn-autodiff first)

// 'blocks' needs numbered units; the MLP's are fc0.weight, fc0.bias, ...
// BLOCKS: error: nn-recompute: units=blocks found no numbered unit (a parameter name with an all-digit component, like h.3.attn.weight) among the forward's parameters

// A unit the forward does not read is named, with the units it does.
// expected-error @+1 {{nn-recompute: unit 'h.0' has no parameter read in the forward; its units are layers.0, head.weight}}
func.func @forward(%x: tensor<4x6xf32>, %labels: tensor<4xi32>,
                   %w0: tensor<6x6xf32> {nn.param = "layers.0.fc.weight"},
                   %wh: tensor<6x3xf32> {nn.param = "head.weight"}) -> tensor<f32> {
  %0 = nn.matmul %x, %w0 : tensor<4x6xf32>, tensor<6x6xf32> -> tensor<4x6xf32>
  %1 = nn.gelu %0 : tensor<4x6xf32>
  %2 = nn.matmul %1, %wh : tensor<4x6xf32>, tensor<6x3xf32> -> tensor<4x3xf32>
  %loss = nn.softmax_cross_entropy %2, %labels : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A unit whose parameters are read around another unit's (here h.0's
// weight is read again after h.1, as a tied embedding would be) is not one
// contiguous part of the forward: recomputing it would run h.1 too.
func.func @forward(%x: tensor<4x6xf32>, %labels: tensor<4xi32>,
                   %w0: tensor<6x6xf32> {nn.param = "h.0.fc.weight"},
                   %w1: tensor<6x6xf32> {nn.param = "h.1.fc.weight"}) -> tensor<f32> {
  %0 = nn.matmul %x, %w0 : tensor<4x6xf32>, tensor<6x6xf32> -> tensor<4x6xf32>
  // expected-error @+1 {{'nn.matmul' op reads unit 'h.1' between the forward's reads of unit 'h.0', so 'h.0' is not one contiguous part of the forward and nn-recompute cannot recompute it}}
  %1 = nn.matmul %0, %w1 : tensor<4x6xf32>, tensor<6x6xf32> -> tensor<4x6xf32>
  %2 = nn.matmul %1, %w0 transpose_rhs : tensor<4x6xf32>, tensor<6x6xf32> -> tensor<4x6xf32>
  %loss = nn.softmax_cross_entropy %2, %labels : tensor<4x6xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
