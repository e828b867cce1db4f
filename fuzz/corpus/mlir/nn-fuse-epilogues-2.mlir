func.func @linear_gelu(%x: tensor<8x4xbf16>, %w: tensor<4x16xbf16>, %b: tensor<16xbf16>, %dy: tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8x16xbf16>) {
  %h = nn.matmul %x, %w : tensor<8x4xbf16>, tensor<4x16xbf16> -> tensor<8x16xbf16>
  %z = nn.bias_add %h, %b : tensor<8x16xbf16>, tensor<16xbf16>
  %r = nn.relu %dy : tensor<8x16xbf16>
  %g = nn.gelu %z : tensor<8x16xbf16>
  %dz = nn.gelu_grad %z, %r : tensor<8x16xbf16>
  return %g, %dz : tensor<8x16xbf16>, tensor<8x16xbf16>
}
