func.func @f(%a: memref<4611686018427387904xf32>, %v: memref<6xf32>) {
  %w = zrt.view %a : memref<4611686018427387904xf32> to memref<6xf32>
  return
}
