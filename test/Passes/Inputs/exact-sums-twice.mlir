// zero-exact-sums refuses to run twice (zero-exact-sums-errors.mlir).
// expected-error @+1 {{zero-exact-sums: the sums are exact already (zero.deterministic is set)}}
module {
func.func @forward(%x: tensor<8x3xf32>, %labels: tensor<8xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<8x3xf32>, tensor<3x5xf32> -> tensor<8x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<8x5xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
}
