module {
  func.func @model(%x: tensor<3x3xf32>) {
    return
  }
}
