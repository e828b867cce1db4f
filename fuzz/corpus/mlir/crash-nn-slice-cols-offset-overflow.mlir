func.func @f(%qkv: tensor<16x96xbf16>) -> tensor<16x32xbf16> {
  %q = nn.slice_cols %qkv {offset = 9223372036854775807 : i64} : tensor<16x96xbf16> -> tensor<16x32xbf16>
  return %q : tensor<16x32xbf16>
}
