// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-lower-to-zrt --zero-plan-memory=share-arenas=false | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-lower-to-zrt --zero-plan-memory='alignment=4 share-arenas=false' | FileCheck %s --check-prefix=ALIGN4
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-lower-to-zrt --zero-plan-memory | FileCheck %s --check-prefix=SHARED

// Every temporary gets an offset in its category's arena; buffers live at
// the same time never overlap, and a freed range is reused. The plan binds:
// the description declares each arena the runtime reserves (the larger of
// the step's and the apply function's), per category with temporaries.
// CHECK-LABEL: func.func @zero_program_describe
// CHECK: zrt.declare_arena grad 384
// CHECK-NEXT: zrt.declare_arena activation 512
// CHECK-NEXT: zrt.declare_arena comm 128
// CHECK-NEXT: return
// The step's arenas per category (param, grad, optimizer, activation, comm,
// data), and the staging copies of its padded collectives (the runtime's,
// planned apart: two 64-byte copies overlap at most).
// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: zrt.arena_bytes = array<i64: 0, 384, 0, 512, 128, 0, 0, 0>, zrt.shared_arena_bytes = 576 : i64, zrt.staging_bytes = 128 : i64
// The first gathered weight (60 bytes, comm) and its all-gather's staging
// copy, each at the start of its own region.
// CHECK: %[[W0:.*]] = zrt.alloc comm {arena_offset = 0 : i64} : memref<3x5xf32>
// CHECK-NEXT: zrt.all_gather %{{.*}} -> %[[W0]] of "h.0.fc.weight" {staging_offset = 0 : i64}
// CHECK-NEXT: zrt.alloc activation {arena_offset = 0 : i64} : memref<2x5xf32>
// CHECK: zrt.free %[[W0]]
// Once it is freed, the next gathered copy takes its range.
// CHECK-NEXT: zrt.alloc comm {arena_offset = 0 : i64} : memref<5xf32>
// The second activation is live with the first: the next 64 bytes.
// CHECK: zrt.alloc activation {arena_offset = 64 : i64} : memref<2x5xf32>

// By default the temporaries of every category share one arena when that
// is smaller: 576 bytes here against 384 + 512 + 128 = 1024 per category.
// Both plans stay on the step; the offsets are the shared plan's, and a
// range one category frees holds another's buffer: the gathered head weight
// (comm) at 64, then the head's gradient (grad) at 64 once it is freed.
// SHARED-LABEL: func.func @zero_program_describe
// SHARED: zrt.declare_shared_arena 576
// SHARED-NOT: zrt.declare_arena
// SHARED: return
// SHARED-LABEL: func.func @zero_program_step
// SHARED-SAME: zrt.arena_bytes = array<i64: 0, 384, 0, 512, 128, 0, 0, 0>, zrt.shared_arena_bytes = 576 : i64, zrt.staging_bytes = 128 : i64
// SHARED: %[[HEAD:.*]] = zrt.alloc comm {arena_offset = 64 : i64} : memref<5x2xf32>
// SHARED-NEXT: zrt.all_gather %{{.*}} -> %[[HEAD]] of "head.weight" :
// SHARED: %[[AGAIN:.*]] = zrt.alloc comm {arena_offset = 64 : i64} : memref<5x2xf32>
// SHARED: zrt.free %[[AGAIN]]
// SHARED-NEXT: zrt.alloc grad {arena_offset = 64 : i64} : memref<5x2xf32>

// With 4-byte alignment nothing is rounded up to 64: smaller arenas.
// ALIGN4-LABEL: func.func @zero_program_describe
// ALIGN4: zrt.declare_arena grad 196
// ALIGN4-LABEL: func.func @zero_program_step
// ALIGN4-SAME: zrt.arena_bytes = array<i64: 0, 196, 0, 220, 100, 0, 0, 0>

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w0: tensor<3x5xf32> {nn.param = "h.0.fc.weight"}, %b0: tensor<5xf32> {nn.param = "h.0.fc.bias"},
                   %w1: tensor<5x5xf32> {nn.param = "h.1.fc.weight"}, %b1: tensor<5xf32> {nn.param = "h.1.fc.bias"},
                   %wh: tensor<5x2xf32> {nn.param = "head.weight"}) -> tensor<f32> {
  %0 = nn.matmul %x, %w0 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %1 = nn.bias_add %0, %b0 : tensor<4x5xf32>, tensor<5xf32>
  %2 = nn.relu %1 : tensor<4x5xf32>
  %3 = nn.matmul %2, %w1 : tensor<4x5xf32>, tensor<5x5xf32> -> tensor<4x5xf32>
  %4 = nn.bias_add %3, %b1 : tensor<4x5xf32>, tensor<5xf32>
  %5 = nn.relu %4 : tensor<4x5xf32>
  %6 = nn.matmul %5, %wh : tensor<4x5xf32>, tensor<5x2xf32> -> tensor<4x2xf32>
  %loss = nn.softmax_cross_entropy %6, %labels : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
