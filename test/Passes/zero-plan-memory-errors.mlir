// RUN: not zero-opt %s --zero-plan-memory=alignment=48 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not zero-opt %s --split-input-file --zero-plan-memory 2>&1 | FileCheck %s --check-prefix=INPUT

// ALIGN: error: zero-plan-memory: alignment must be a power of two, got 48
// INPUT: error: zero-plan-memory: expected the lowered program (run zero-lower-to-runtime first)
// INPUT: error: 'func.call' op zero-plan-memory: expected a constant size and category (run canonicalize first)
module {
}

// -----

func.func private @zrt_alloc(!llvm.ptr, i64, i32) -> !llvm.ptr
func.func @zero_program_describe(%ctx: !llvm.ptr) {
  return
}
func.func @zero_program_step(%ctx: !llvm.ptr, %args: !llvm.ptr, %loss: !llvm.ptr, %n: i64) {
  %c3 = arith.constant 3 : i32
  %p = call @zrt_alloc(%ctx, %n, %c3) : (!llvm.ptr, i64, i32) -> !llvm.ptr
  return
}
