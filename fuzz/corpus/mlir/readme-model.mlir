func.func @forward(%x: tensor<24x20xf32>, %labels: tensor<24xi32>,
                   %w: tensor<20x10xf32> {nn.param = "fc.weight"},
                   %b: tensor<10xf32> {nn.param = "fc.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<24x20xf32>, tensor<20x10xf32> -> tensor<24x10xf32>
  %logits = nn.bias_add %h, %b : tensor<24x10xf32>, tensor<10xf32>
  %loss = nn.softmax_cross_entropy %logits, %labels : tensor<24x10xf32>, tensor<24xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
