// zero-exact-sums refuses gradients reduced in the micro-step
// (zero-exact-sums-errors.mlir).
func.func @forward(%x: tensor<8x3xf32>, %labels: tensor<8xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  // expected-error @+1 {{'nn.add' op accumulates a gradient reduced in the micro-step (--accumulate=sharded); zero-exact-sums (--deterministic) needs each rank's own gradient accumulated (--accumulate=local)}}
  %h = nn.matmul %x, %w : tensor<8x3xf32>, tensor<3x5xf32> -> tensor<8x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<8x5xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
