// RUN: zero-opt %s --zero-elide-zero-fills | FileCheck %s
// RUN: zero-opt %s --zero-elide-zero-fills --zero-lower-zrt-to-calls --canonicalize | FileCheck %s --check-prefix=CALLS

// A planned buffer whose first user writes all of it without reading it
// skips the zero-fill; every other buffer keeps it.
// CHECK-LABEL: func.func @zero_program_step
func.func @zero_program_step(%a: memref<4x5xf32>, %b: memref<5x6xf32>,
                             %x: memref<4x6xf32>, %gamma: memref<6xf32>,
                             %shard: memref<12xf32>,
                             %loss: memref<f32> {zrt.loss}) {
  // A GEMM's output.
  // CHECK: %[[C:.*]] = zrt.alloc activation {arena_offset = 0 : i64, unfilled} : memref<4x6xf32>
  %c = zrt.alloc activation {arena_offset = 0 : i64} : memref<4x6xf32>
  zrt.matmul %a, %b -> %c : memref<4x5xf32>, memref<5x6xf32> -> memref<4x6xf32>

  // Written through a view first: the view is the same bytes.
  // CHECK: %[[G:.*]] = zrt.alloc activation {arena_offset = 128 : i64, unfilled} : memref<24xf32>
  // CHECK-NEXT: zrt.view %[[G]]
  %g = zrt.alloc activation {arena_offset = 128 : i64} : memref<24xf32>
  %gv = zrt.view %g : memref<24xf32> to memref<4x6xf32>
  zrt.gelu %c -> %gv : memref<4x6xf32>

  // Read and written by its first user (in place): it needs its zeros.
  // CHECK: zrt.alloc activation {arena_offset = 256 : i64} : memref<4x6xf32>
  %s = zrt.alloc activation {arena_offset = 256 : i64} : memref<4x6xf32>
  zrt.add %s, %x -> %s : memref<4x6xf32>

  // Its first user copies into a part of it (a bucket member): the rest
  // must stay zero.
  // CHECK: zrt.alloc comm {arena_offset = 384 : i64} : memref<24xf32>
  %bucket = zrt.alloc comm {arena_offset = 384 : i64} : memref<24xf32>
  zrt.copy 16 bytes %c[0] to %bucket[0] : memref<4x6xf32>, memref<24xf32>

  // A layer norm's input gradient is overwritten; its parameter gradients
  // are reductions, which a backend may accumulate into: they stay filled.
  // CHECK: zrt.alloc grad {arena_offset = 512 : i64, unfilled} : memref<4x6xf32>
  // CHECK-NEXT: zrt.alloc grad {arena_offset = 640 : i64} : memref<6xf32>
  // CHECK-NEXT: zrt.alloc grad {arena_offset = 704 : i64} : memref<6xf32>
  %dx = zrt.alloc grad {arena_offset = 512 : i64} : memref<4x6xf32>
  %dgamma = zrt.alloc grad {arena_offset = 640 : i64} : memref<6xf32>
  %dbeta = zrt.alloc grad {arena_offset = 704 : i64} : memref<6xf32>
  zrt.layer_norm_grad %x, %gamma, %c -> %dx, %dgamma, %dbeta epsilon 1.0e-05 : memref<4x6xf32>, memref<6xf32>

  // A gathered parameter: the all-gather writes all of it, started or not.
  // CHECK: zrt.alloc comm {arena_offset = 896 : i64, unfilled} : memref<4x6xf32>
  // CHECK: zrt.alloc comm {arena_offset = 1024 : i64, unfilled} : memref<4x6xf32>
  %w = zrt.alloc comm {arena_offset = 896 : i64} : memref<4x6xf32>
  zrt.all_gather %shard -> %w of "h.0.w" : memref<12xf32> -> memref<4x6xf32>
  %w2 = zrt.alloc comm {arena_offset = 1024 : i64} : memref<4x6xf32>
  %h = zrt.all_gather_start %shard -> %w2 of "h.1.w" : memref<12xf32> -> memref<4x6xf32>
  zrt.wait %h

  // Unplanned: zrt_alloc fills it whatever its first user.
  // CHECK: zrt.alloc activation : memref<4x6xf32>
  %u = zrt.alloc activation : memref<4x6xf32>
  zrt.matmul %a, %b -> %u : memref<4x5xf32>, memref<5x6xf32> -> memref<4x6xf32>

  // Never used: nothing to elide.
  // CHECK: zrt.alloc data {arena_offset = 768 : i64} : memref<2xf32>
  %unused = zrt.alloc data {arena_offset = 768 : i64} : memref<2xf32>

  zrt.fill %loss with 0.0 : memref<f32>
  zrt.free %c : memref<4x6xf32>
  zrt.free %g : memref<24xf32>
  zrt.free %s : memref<4x6xf32>
  zrt.free %bucket : memref<24xf32>
  zrt.free %dx : memref<4x6xf32>
  zrt.free %dgamma : memref<6xf32>
  zrt.free %dbeta : memref<6xf32>
  zrt.free %w : memref<4x6xf32>
  zrt.free %w2 : memref<4x6xf32>
  zrt.free %u : memref<4x6xf32>
  zrt.free %unused : memref<2xf32>
  return
}

// The runtime skips the fill of an unfilled buffer only.
// CALLS-LABEL: func.func @zero_program_step
// CALLS: call @zrt_alloc_in_arena_unfilled(%{{.*}}, %c96_i64, %c3_i32, %c0_i64)
// CALLS: call @zrt_alloc_in_arena_unfilled(%{{.*}}, %c96_i64, %c3_i32, %c128_i64)
// CALLS: call @zrt_alloc_in_arena(%{{.*}}, %c96_i64, %c3_i32, %c256_i64)
// CALLS: call @zrt_alloc_in_arena(%{{.*}}, %c96_i64, %c4_i32, %c384_i64)
// CALLS: call @zrt_alloc(%{{.*}}, %c96_i64, %c3_i32)
