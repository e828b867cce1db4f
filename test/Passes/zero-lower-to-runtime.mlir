// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement="stage=3 world-size=2" --zero-insert-collectives --zero-lower-to-runtime --canonicalize | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement="stage=1 world-size=2" --zero-insert-collectives --zero-lower-to-runtime --canonicalize | FileCheck %s --check-prefix=S1
// (--canonicalize merges the constants, which are then named by value.)

// The describe function declares the program (ABI version 6, world size 2,
// stage 3, task 0 = classification, global batch 4, 1 token per example, 3
// features, 5 classes) and each argument: role, dtype, rank and whole
// shape, sharded or not, initialiser.
// CHECK: llvm.mlir.global internal constant @[[NAME:.*]]("fc.weight\00")
// CHECK-LABEL: func.func @zero_program_describe(%{{.*}}: !llvm.ptr)
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 0.577350259 : f32
// CHECK-DAG: %[[P:.*]] = llvm.mlir.addressof @[[NAME]] : !llvm.ptr
// CHECK: call @zrt_declare_program(%{{.*}}, %c6_i64, %c2_i64, %c3_i64, %c0_i32, %c4_i64, %c1_i64, %c3_i64, %c5_i64)
// The weight: role 2 (param), f32, rank 2, 3 x 5, sharded, U(-1/sqrt(3), 1/sqrt(3)).
// CHECK: call @zrt_declare_arg(%{{.*}}, %c2_i64, %[[P]], %c2_i32, %c0_i32, %c2_i32, %c3_i64, %c5_i64, %c0_i64, %c0_i64, %c1_i32, %c1_i32, %[[SCALE]])

// The step: buffers come from the argument array; a gathered weight lives
// from its all_gather to its release; AdamW updates the shards in place.
// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[ARGS:.*]]: !llvm.ptr, %[[LOSS:.*]]: !llvm.ptr)
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[WSHARD:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[WFULL:.*]] = call @zrt_alloc(%[[CTX]], %c60_i64, %c4_i32)
// CHECK: call @zrt_all_gather(%[[CTX]], %c0_i32, %[[WSHARD]], %[[WFULL]], %c15_i64, %c8_i64)
// CHECK: call @zrt_matmul(%[[CTX]], %c0_i32, %{{.*}}, %[[WFULL]],
// CHECK-NEXT: call @zrt_free(%[[CTX]], %[[WFULL]])
// CHECK: %[[GSHARD:.*]] = call @zrt_alloc(%[[CTX]], %c32_i64
// CHECK: call @zrt_reduce_scatter(%[[CTX]], %c0_i32, %{{.*}}, %[[GSHARD]],
// CHECK: call @zrt_adamw(%[[CTX]], %c0_i32, %[[WSHARD]], %[[GSHARD]], %[[M:[^,]*]], %[[V:[^,]*]], %[[WSHARD]], %[[M]], %[[V]],
// CHECK-NEXT: call @zrt_free(%[[CTX]], %[[GSHARD]])
// The loss is reduced over the ranks and written to the loss pointer.
// CHECK: call @zrt_all_reduce(%[[CTX]], %c0_i32, %[[L:[^,]*]], %[[L]],
// CHECK: call @zrt_copy(%[[CTX]], %[[L]], %[[LOSS]],
// No state is copied back: every update was written in place.
// CHECK-NOT: call @zrt_copy
// CHECK: return

// Stage 1: the updated shard is all-gathered straight into the replicated
// parameter's buffer, which nothing reads after the local shard is taken.
// S1-LABEL: func.func @zero_program_step
// S1: %[[SLOT:.*]] = llvm.getelementptr %{{.*}}[2]
// S1-NEXT: %[[W:.*]] = llvm.load %[[SLOT]]
// S1: call @zrt_shard_slice(%{{.*}}, %c0_i32, %[[W]], %[[PSHARD:[^,]*]],
// S1: call @zrt_adamw(%{{.*}}, %c0_i32, %[[PSHARD]], %{{.*}}, %{{.*}}, %{{.*}}, %[[PSHARD]],
// S1: call @zrt_all_gather(%{{.*}}, %c0_i32, %[[PSHARD]], %[[W]],
// S1-NOT: call @zrt_copy(%{{.*}}, %{{.*}}, %[[W]],

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"},
                   %b: tensor<5xf32> {nn.param = "fc.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %y = nn.bias_add %h, %b : tensor<4x5xf32>, tensor<5xf32>
  %loss = nn.softmax_cross_entropy %y, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
