// hand-written-model.mlir with its linear layers written as the fused ops
// of nn-fuse-epilogues (see fused-epilogues.test).
func.func @forward(%x: tensor<12x7xf32>, %labels: tensor<12xi32>,
                   %w0: tensor<7x11xf32> {nn.param = "in.weight"},
                   %b0: tensor<11xf32> {nn.param = "in.bias"},
                   %w1: tensor<11x11xf32> {nn.param = "block.weight"},
                   %b1: tensor<11xf32> {nn.param = "block.bias"},
                   %w2: tensor<11x5xf32> {nn.param = "out.weight"},
                   %b2: tensor<5xf32> {nn.param = "out.bias"}) -> tensor<f32> {
  %pre0, %h = nn.matmul_bias_gelu %x, %w0, %b0 : tensor<12x7xf32>, tensor<7x11xf32>, tensor<11xf32> -> tensor<12x11xf32>
  %pre1, %g = nn.matmul_bias_gelu %h, %w1, %b1 : tensor<12x11xf32>, tensor<11x11xf32>, tensor<11xf32> -> tensor<12x11xf32>
  %r = nn.add %h, %g : tensor<12x11xf32>
  %logits = nn.matmul_bias %r, %w2, %b2 : tensor<12x11xf32>, tensor<11x5xf32>, tensor<5xf32> -> tensor<12x5xf32>
  %loss = nn.softmax_cross_entropy %logits, %labels : tensor<12x5xf32>, tensor<12xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
