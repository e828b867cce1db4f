zero.group @dp world_size(2)
func.func @f(%a: tensor<5xf32> {zero.unsharded_type = tensor<9223372036854775807xf32>}) {
  return
}
