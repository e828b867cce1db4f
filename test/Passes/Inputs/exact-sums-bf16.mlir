// zero-exact-sums refuses bfloat16 training (zero-exact-sums-errors.mlir).
func.func @forward(%x: tensor<8x3xbf16>, %labels: tensor<8xi32>,
                   %w: tensor<3x5xbf16> {nn.param = "fc.weight"}) -> tensor<f32> {
  // expected-error @+1 {{'zero.reduce_scatter' op reduces 'bf16' values: zero-exact-sums (--deterministic) is for float32 training}}
  %h = nn.matmul %x, %w : tensor<8x3xbf16>, tensor<3x5xbf16> -> tensor<8x5xbf16>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<8x5xbf16>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
