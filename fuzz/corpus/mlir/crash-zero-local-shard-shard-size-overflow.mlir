zero.group @dp world_size(2)
func.func @f(%a: tensor<9223372036854775807xf32>) -> tensor<5xf32> {
  %s = zero.local_shard %a over @dp : tensor<9223372036854775807xf32> -> tensor<5xf32>
  return %s : tensor<5xf32>
}
