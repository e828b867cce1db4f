// RUN: zero-opt %s --zero-lower-zrt-to-calls --canonicalize | FileCheck %s
// RUN: zero-opt %s --zero-lower-zrt-to-calls | FileCheck %s --check-prefix=ONCE

// A string is one constant however many functions use it: the argument's
// name and the all-gather's label.
// ONCE: ("h.0.w\00")
// ONCE-NOT: ("h.0.w\00")

// Each zrt op becomes the call of its zrt_* function: the context first,
// then what the C prototype takes, the dtypes and sizes read from the
// buffers' types.

// CHECK-DAG: llvm.mlir.global internal constant @[[CONFIG:__zrt_str_[0-9]+]]("{\22model_type\22: \22gpt2\22}\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[$NAME:__zrt_str_[0-9]+]]("h.0.w\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[$FREQ:__zrt_rope_inv_freq_0]](dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32>)
// CHECK-LABEL: func.func @zero_program_describe
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr)
// ABI version 20, world size 3, stage 2, task 1 (lm), batch 6 x 8, 0 features, 50 classes.
// CHECK: call @zrt_declare_program(%[[CTX]], %c20_i64, %c3_i64, %c2_i64, %c1_i32, %c6_i64, %c8_i64, %c0_i64, %c50_i64)
// CHECK: call @zrt_declare_micro_batches(%[[CTX]], %c4_i64)
// CHECK: call @zrt_declare_hf_config(%[[CTX]], %{{.*}})
// Index 0, role 2 (param), bf16 (1), rank 2, 6 x 4, sharded, init 2 (normal), 0.02.
// CHECK: call @zrt_declare_arg(%[[CTX]], %c0_i64, %{{.*}}, %c2_i32, %c1_i32, %c2_i32, %c6_i64, %c4_i64, %c0_i64, %c0_i64, %c1_i32, %c2_i32, %{{.*}})
// The activation arena (category 3) of 192 bytes.
// CHECK: call @zrt_declare_arena(%[[CTX]], %c3_i32, %c192_i64)
func.func @zero_program_describe() {
  zrt.declare_program world_size 3 stage 2 task lm batch 6 x 8 features 0 classes 50
  zrt.declare_micro_batches 4
  zrt.declare_hf_config "{\"model_type\": \"gpt2\"}"
  zrt.declare_arg 0 "h.0.w" param sharded init normal 2.000000e-02 : tensor<6x4xbf16>
  zrt.declare_arena activation 192
  return
}

// The arguments' buffers are loaded from the argument array, in order; the
// loss output is the third argument.
// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[ARGS:.*]]: !llvm.ptr, %[[LOSS:.*]]: !llvm.ptr)
// CHECK: %[[LABEL:.*]] = llvm.mlir.addressof @[[$NAME]]
// CHECK: %[[TABLE:.*]] = llvm.mlir.addressof @[[$FREQ]]
// CHECK: %[[A:.*]] = llvm.load %[[ARGS]]
// CHECK-NEXT: %[[S1:.*]] = llvm.getelementptr %[[ARGS]][1]
// CHECK-NEXT: %[[B:.*]] = llvm.load %[[S1]]
// A planned 4x6 bf16 buffer: 48 bytes at offset 128 of the activation
// arena (category 3); one without a place comes from the allocator.
// CHECK: %[[C:.*]] = call @zrt_alloc_in_arena(%[[CTX]], %c48_i64, %c3_i32, %c128_i64)
// CHECK-NEXT: %[[D:.*]] = call @zrt_alloc(%[[CTX]], %c8_i64, %c1_i32)
// m = 4, n = 6, k = 5 from a's shape (transposed: stored 5 x 4).
// CHECK-NEXT: call @zrt_matmul(%[[CTX]], %c1_i32, %[[A]], %[[B]], %[[C]], %c4_i64, %c6_i64, %c5_i64, %c1_i32, %c0_i32)
// A fused GEMM without GELU passes no pre-activation (NULL); epilogue 0.
// CHECK: call @zrt_matmul_bias(%[[CTX]], %c1_i32, %[[A]], %[[B]], %{{.*}}, %[[C]], %[[NULL:.*]], %c4_i64, %c6_i64, %c5_i64, %c1_i32, %c0_i32, %c0_i32)
// The rope of [2 sequences * 2, 2 heads * 4] with its frequency table,
// inverse (1).
// CHECK: call @zrt_rope(%[[CTX]], %c1_i32, %[[R:.*]], %[[R]], %c2_i64, %c2_i64, %c2_i64, %c4_i64, %[[TABLE]], %c1_i32)
// A view is the same pointer; a copy at byte offsets advances both.
// CHECK: %[[SRC:.*]] = llvm.getelementptr %[[C]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: %[[DST:.*]] = llvm.getelementptr %[[A]][4] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: call @zrt_copy(%[[CTX]], %[[SRC]], %[[DST]], %c16_i64)
// A started all-gather returns the handle zrt_wait takes: 24 of 4 each,
// with its label as a C string (the one constant of "h.0.w", its address
// hoisted to the top by --canonicalize).
// Over the shard group (1), bf16 (1).
// CHECK: %[[H:.*]] = call @zrt_all_gather_start(%[[CTX]], %c1_i32, %c1_i32, %{{.*}}, %[[C]], %c24_i64, %c8_i64, %[[LABEL]])
// CHECK-NEXT: call @zrt_wait(%[[CTX]], %[[H]])
// CHECK: call @zrt_fill(%[[CTX]], %c0_i32, %[[LOSS]], %c1_i64, %{{.*}})
// CHECK-NEXT: call @zrt_free(%[[CTX]], %[[C]])
// CHECK-NEXT: call @zrt_free(%[[CTX]], %[[D]])
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
  %h = zrt.all_gather_start %shard -> %c over shard of "h.0.w" : memref<8xbf16> -> memref<4x6xbf16>
  zrt.wait %h
  zrt.fill %loss with 2.500000e-01 : memref<f32>
  zrt.free %c : memref<4x6xbf16>
  zrt.free %d : memref<2xf32>
  return
}

