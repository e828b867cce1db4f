// RUN: zero-opt %s --zero-lower-zrt-to-calls --canonicalize | FileCheck %s

// The arena every category shares is zrt_declare_arena of ZRT_ARENA_SHARED
// (8, one past the categories); the step's two plans stay on the function.
// CHECK-LABEL: func.func @zero_program_describe
// CHECK: call @zrt_declare_arena(%{{.*}}, %c8_i32, %c4096_i64)
// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: zrt.arena_bytes = array<i64: 0, 2048, 0, 4096, 0, 0, 0, 0>
// CHECK-SAME: zrt.shared_arena_bytes = 4096 : i64
func.func @zero_program_describe() {
  zrt.declare_program world_size 1 stage 0 task lm batch 1 x 8 features 0 classes 50
  zrt.declare_shared_arena 4096
  return
}

func.func @zero_program_step(%loss: memref<f32> {zrt.loss}) attributes {zrt.arena_bytes = array<i64: 0, 2048, 0, 4096, 0, 0, 0, 0>, zrt.shared_arena_bytes = 4096 : i64} {
  return
}
