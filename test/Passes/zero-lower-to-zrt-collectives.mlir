// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-schedule-overlap --zero-lower-to-zrt | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-lower-to-zrt | FileCheck %s --check-prefix=S2

// The zero pattern family of zero-lower-to-zrt (LowerCollectives.cpp) at
// stage 3 with prefetch: a started collective's future becomes the zrt
// handle that its zrt.wait completes; its output buffer is allocated at the
// start (a gathered copy is comm memory, a reduced shard grad memory), and
// its input lives until the wait. A gathered copy is freed after its last
// reader (at its zero.release).

// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: (%[[X:arg0]]: memref<2x3xf32>, %[[LABELS:arg1]]: memref<2xi32>, %[[W1:arg2]]: memref<9xf32>, %[[W2:arg3]]: memref<15xf32>
// CHECK-NEXT: %[[W1_FULL:.*]] = zrt.alloc comm : memref<3x6xf32>
// CHECK-NEXT: %[[G1:.*]] = zrt.all_gather_start %[[W1]] -> %[[W1_FULL]] of "fc1.weight" : memref<9xf32> -> memref<3x6xf32>
// CHECK-NEXT: %[[W2_FULL:.*]] = zrt.alloc comm : memref<6x5xf32>
// CHECK-NEXT: %[[G2:.*]] = zrt.all_gather_start %[[W2]] -> %[[W2_FULL]] of "fc2.weight"
// CHECK-NEXT: zrt.wait %[[G1]]
// CHECK-NEXT: %[[H:.*]] = zrt.alloc activation : memref<2x6xf32>
// CHECK-NEXT: zrt.matmul %[[X]], %[[W1_FULL]] -> %[[H]]
// CHECK-NEXT: zrt.free %[[W1_FULL]] : memref<3x6xf32>
// The backward gathers fc2 again, started before the forward's ends.
// CHECK: %[[W2_BACK:.*]] = zrt.alloc comm : memref<6x5xf32>
// CHECK-NEXT: %[[G3:.*]] = zrt.all_gather_start %[[W2]] -> %[[W2_BACK]] of "fc2.weight"
// CHECK-NEXT: zrt.wait %[[G2]]
// CHECK: zrt.wait %[[G3]]
// CHECK-NEXT: %[[DR:.*]] = zrt.alloc activation : memref<2x6xf32>
// CHECK-NEXT: zrt.matmul %{{.*}}, %[[W2_BACK]] -> %[[DR]] {transpose_b}
// CHECK-NEXT: zrt.free %[[W2_BACK]]
// CHECK-NEXT: %[[DW2:.*]] = zrt.alloc grad : memref<6x5xf32>
// CHECK-NEXT: zrt.matmul {{.*}} -> %[[DW2]] {transpose_a}
// CHECK: %[[DW2_SHARD:.*]] = zrt.alloc grad : memref<15xf32>
// CHECK-NEXT: %[[RS2:.*]] = zrt.reduce_scatter_start %[[DW2]] -> %[[DW2_SHARD]] of "fc2.weight" : memref<6x5xf32> -> memref<15xf32>
// The whole gradient is read until the wait, and freed right after it.
// CHECK-NOT: zrt.free %[[DW2]]
// CHECK: zrt.wait %[[RS2]]
// CHECK-NEXT: zrt.free %[[DW2]]
// CHECK: %[[RS1:.*]] = zrt.reduce_scatter_start %{{.*}} -> %[[DW1_SHARD:.*]] of "fc1.weight"
// CHECK-NEXT: zrt.wait %[[RS1]]
// CHECK: zrt.adamw %[[W1]], %[[DW1_SHARD]]
// CHECK: zrt.adamw %[[W2]], %[[DW2_SHARD]]
// The loss is reduced in place.
// CHECK: %[[LR:.*]] = zrt.all_reduce_start %[[LOSS:.*]] -> %[[LOSS]] of "loss" : memref<f32> -> memref<f32>
// CHECK-NEXT: zrt.wait %[[LR]]
// CHECK-NEXT: zrt.copy 4 bytes %[[LOSS]][0]
// CHECK-NOT: zero.
// CHECK-NOT: !zero.future

// Stage 2: the parameters are whole, the gradients reduce-scattered to
// shards, and AdamW updates this rank's shard of each parameter, taken by
// zrt.shard_slice into optimizer memory, then gathered back into it.
// S2-LABEL: func.func @zero_program_step
// S2-SAME: %[[W1:arg2]]: memref<3x6xf32>
// S2: %[[DW1:.*]] = zrt.alloc grad : memref<9xf32>
// S2-NEXT: zrt.reduce_scatter %{{.*}} -> %[[DW1]] of "fc1.weight" : memref<3x6xf32> -> memref<9xf32>
// S2: %[[P1:.*]] = zrt.alloc optimizer : memref<9xf32>
// S2-NEXT: zrt.shard_slice %[[W1]] -> %[[P1]] : memref<3x6xf32> -> memref<9xf32>
// S2-NEXT: zrt.adamw %[[P1]], %[[DW1]], %{{.*}}, %{{.*}} -> %[[P1]],
// S2: zrt.all_gather %[[P1]] -> %[[W1]] of "fc1.weight" : memref<9xf32> -> memref<3x6xf32>

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w1: tensor<3x6xf32> {nn.param = "fc1.weight"},
                   %w2: tensor<6x5xf32> {nn.param = "fc2.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w1 : tensor<4x3xf32>, tensor<3x6xf32> -> tensor<4x6xf32>
  %r = nn.relu %h : tensor<4x6xf32>
  %y = nn.matmul %r, %w2 : tensor<4x6xf32>, tensor<6x5xf32> -> tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %y, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
