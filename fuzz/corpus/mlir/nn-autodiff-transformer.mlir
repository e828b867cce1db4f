func.func @forward(%tokens: tensor<8xi32> {nn.data = "tokens"}, %targets: tensor<8xi32> {nn.data = "targets"},
                   %wte: tensor<16x8xf32> {nn.param = "wte.weight"},
                   %g: tensor<8xf32> {nn.param = "ln.weight"}, %b: tensor<8xf32> {nn.param = "ln.bias"},
                   %w: tensor<8x24xf32> {nn.param = "attn.weight"}) -> tensor<f32> attributes {nn.seq_len = 4 : i64} {
  %x = nn.embedding %tokens, %wte : tensor<8xi32>, tensor<16x8xf32> -> tensor<8x8xf32>
  %h = nn.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<8x8xf32>, tensor<8xf32>
  %qkv = nn.matmul %h, %w : tensor<8x8xf32>, tensor<8x24xf32> -> tensor<8x24xf32>
  %q = nn.slice_cols %qkv {offset = 0 : i64} : tensor<8x24xf32> -> tensor<8x8xf32>
  %k = nn.slice_cols %qkv {offset = 8 : i64} : tensor<8x24xf32> -> tensor<8x8xf32>
  %v = nn.slice_cols %qkv {offset = 16 : i64} : tensor<8x24xf32> -> tensor<8x8xf32>
  %qr = nn.rope %q {num_heads = 2 : i64, seq_len = 4 : i64, theta = 1.0e+04 : f32, scaling = "linear", factor = 4.0 : f32} : tensor<8x8xf32>
  %a = nn.attention %qr, %k, %v {num_heads = 2 : i64, num_kv_heads = 2 : i64, seq_len = 4 : i64} : tensor<8x8xf32>, tensor<8x8xf32>
  %y = nn.add %x, %a : tensor<8x8xf32>
  %logits = nn.matmul %y, %wte transpose_rhs : tensor<8x8xf32>, tensor<16x8xf32> -> tensor<8x16xf32>
  %loss = nn.softmax_cross_entropy %logits, %targets : tensor<8x16xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
