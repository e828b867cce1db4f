// A bf16 classifier without bias (zero-offload-optimizer.mlir).
func.func @forward(%x: tensor<8x3xbf16> {nn.data = "features"},
                   %labels: tensor<8xi32> {nn.data = "labels"},
                   %w: tensor<3x5xbf16> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<8x3xbf16>, tensor<3x5xbf16> -> tensor<8x5xbf16>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<8x5xbf16>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
