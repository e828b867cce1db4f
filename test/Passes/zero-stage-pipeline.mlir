// RUN: zero-opt %s --stage=3 --world-size=2 | FileCheck %s
// RUN: zero-opt %s --pass-pipeline="builtin.module(zero-stage-pipeline{stage=3 world-size=2})" | FileCheck %s
// RUN: zero-opt %s --stage=3 --world-size=2 --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASSES

// The whole pipeline ends in the LLVM dialect: the two exported functions and
// the runtime entry points they call.
// CHECK-DAG: llvm.func @zrt_declare_program(
// CHECK-DAG: llvm.func @zrt_all_gather_start(
// CHECK-DAG: llvm.func @zrt_reduce_scatter_start(
// CHECK-DAG: llvm.func @zrt_wait(
// CHECK-DAG: llvm.func @zrt_adamw(
// CHECK-LABEL: llvm.func @zero_program_describe(%{{.*}}: !llvm.ptr)
// No op of the nn, zero or zrt dialects is left; the step keeps the arena
// sizes zero-plan-memory computed (per category, and the smaller shared
// arena that binds: ZRT_ARENA_SHARED is 6), and its temporaries are placed
// in them.
// CHECK: llvm.call @zrt_declare_arena(
// CHECK-LABEL: llvm.func @zero_program_step(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {zrt.arena_bytes = array<i64: 0, 128, 0, 256, 64, 0, 0, 0>, zrt.shared_arena_bytes = 256 : i64}
// CHECK: llvm.call @zrt_alloc_in_arena(
// CHECK-NOT: func.func
// CHECK-NOT: {{(= |^ *)nn\.}}
// CHECK-NOT: {{(= |^ *)zero\.}}
// CHECK-NOT: {{(= |^ *)zrt\.}}

// Every pass of the pipeline, in order, is visible on its own.
// PASSES: IR Dump After SplitBatch (zero-split-batch)
// PASSES: IR Dump After Autodiff (nn-autodiff)
// PASSES: IR Dump After AdamW (zero-adamw)
// PASSES: IR Dump After Placement (zero-placement)
// PASSES: IR Dump After InsertCollectives (zero-insert-collectives)
// PASSES: IR Dump After ClipGradNorm (zero-clip-grad-norm)
// PASSES: IR Dump After AccumulateGradients (zero-accumulate-gradients)
// PASSES: IR Dump After ScheduleOverlap (zero-schedule-overlap)
// Between the tensor program and the calls, the zrt program on buffers.
// PASSES: IR Dump After LowerZeroToZrt (zero-lower-to-zrt)
// PASSES: zrt.alloc
// PASSES: IR Dump After PlanMemory (zero-plan-memory)
// PASSES: zrt.alloc comm {arena_offset =
// PASSES: IR Dump After LowerZrtToCalls (zero-lower-zrt-to-calls)
// PASSES: IR Dump After Canonicalizer (canonicalize)
// PASSES: IR Dump After {{.*}}(convert-func-to-llvm)
// PASSES: IR Dump After {{.*}}(convert-arith-to-llvm)
// PASSES: IR Dump After {{.*}}(reconcile-unrealized-casts)

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
