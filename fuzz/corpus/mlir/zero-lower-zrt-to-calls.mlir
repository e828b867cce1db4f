func.func @zero_program_describe() {
  zrt.declare_program world_size 3 stage 2 task lm batch 6 x 8 features 0 classes 50
  zrt.declare_micro_batches 4
  zrt.declare_hf_config "{\"model_type\": \"gpt2\"}"
  zrt.declare_arg 0 "h.0.w" param sharded init normal 2.000000e-02 : tensor<6x4xbf16>
  zrt.declare_arena activation 192
  return
}

func.func @zero_program_step(%a: memref<5x4xbf16>, %b: memref<5x6xbf16>,
                             %bias: memref<6xbf16>, %shard: memref<8xbf16>,
                             %r: memref<4x8xbf16>,
                             %loss: memref<f32> {zrt.loss}) {
  %c = zrt.alloc activation {arena_offset = 128 : i64} : memref<4x6xbf16>
  %d = zrt.alloc grad : memref<2xf32>
  zrt.matmul %a, %b -> %c {transpose_a} : memref<5x4xbf16>, memref<5x6xbf16> -> memref<4x6xbf16>
  zrt.matmul_bias %a, %b, %bias -> %c epilogue bias {transpose_a} : memref<5x4xbf16>, memref<5x6xbf16>, memref<6xbf16> -> memref<4x6xbf16>
  zrt.rope %r -> %r seq_len 2 heads 2 inv_freq [1.0, 0.5] {inverse} : memref<4x8xbf16>
  %flat = zrt.view %c : memref<4x6xbf16> to memref<24xbf16>
  zrt.copy 16 bytes %flat[8] to %a[4] : memref<24xbf16>, memref<5x4xbf16>
  %h = zrt.all_gather_start %shard -> %c : memref<8xbf16> -> memref<4x6xbf16>
  zrt.wait %h
  zrt.fill %loss with 2.500000e-01 : memref<f32>
  zrt.free %c : memref<4x6xbf16>
  zrt.free %d : memref<2xf32>
  return
}
