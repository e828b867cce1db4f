func.func @f(%q: memref<4x8xf32>, %kv: memref<4x4611686018427387904xf32>) {
  zrt.attention %q, %kv, %kv -> %q seq_len 2 heads 4 kv_heads 2 : memref<4x8xf32>, memref<4x4611686018427387904xf32>
  return
}
