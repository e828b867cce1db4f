// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-lower-to-zrt | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=1 --zero-insert-collectives --zero-lower-to-zrt | FileCheck %s --check-prefix=S1
// The zrt program reads back (round trip) to the same text.
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-lower-to-zrt > %t.mlir
// RUN: zero-opt %t.mlir | diff %t.mlir -

// The describe function declares the program (world size 2, stage 3, a
// classification task of global batch 4, 3 features, 5 classes) and each
// argument: role, whole type, sharded or not, initialiser.
// CHECK-LABEL: func.func @zero_program_describe()
// CHECK-NEXT: zrt.declare_program world_size 2 stage 3 task classify batch 4 x 1 features 3 classes 5
// CHECK-NEXT: zrt.declare_micro_batches 1
// CHECK-NEXT: zrt.declare_arg 0 "features" features init zeros 0.000000e+00 : tensor<2x3xf32>
// CHECK-NEXT: zrt.declare_arg 1 "labels" labels init zeros 0.000000e+00 : tensor<2xi32>
// The weight: a sharded parameter of 3 x 5, U(-1/sqrt(3), 1/sqrt(3)).
// CHECK-NEXT: zrt.declare_arg 2 "fc.weight" param sharded init uniform 0.577350259 : tensor<3x5xf32>
// CHECK: zrt.declare_arg 4 "adam_m.fc.weight" adam_m sharded init zeros
// CHECK: zrt.declare_arg 8 "lr" lr init zeros 0.000000e+00 : tensor<f32>

// The step: a buffer per argument (the weight's shard of ceil(15/2) = 8
// elements) and the loss output; a gathered weight lives from its
// all_gather to its release; AdamW updates the shards in place.
// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: (%[[X:.*]]: memref<2x3xf32>, %[[LABELS:.*]]: memref<2xi32>, %[[WSHARD:.*]]: memref<8xf32>, %{{.*}}: memref<3xf32>, %[[M:.*]]: memref<8xf32>, %[[V:.*]]: memref<8xf32>, {{.*}}, %[[LOSS:.*]]: memref<f32> {zrt.loss})
// CHECK: %[[WFULL:.*]] = zrt.alloc comm : memref<3x5xf32>
// Each collective is labelled with the tensor it moves (the watchdog's
// message names it).
// CHECK-NEXT: zrt.all_gather %[[WSHARD]] -> %[[WFULL]] of "fc.weight" : memref<8xf32> -> memref<3x5xf32>
// CHECK-NEXT: %[[H:.*]] = zrt.alloc activation : memref<2x5xf32>
// CHECK-NEXT: zrt.matmul %[[X]], %[[WFULL]] -> %[[H]] : memref<2x3xf32>, memref<3x5xf32> -> memref<2x5xf32>
// CHECK-NEXT: zrt.free %[[WFULL]] : memref<3x5xf32>
// The bias is added in place.
// CHECK: zrt.bias_add %[[H]], %{{.*}} -> %[[H]]
// CHECK: %[[GFULL:.*]] = zrt.alloc grad : memref<3x5xf32>
// CHECK-NEXT: zrt.matmul %[[X]], %{{.*}} -> %[[GFULL]] {transpose_a}
// CHECK: %[[GSHARD:.*]] = zrt.alloc grad : memref<8xf32>
// CHECK-NEXT: zrt.reduce_scatter %[[GFULL]] -> %[[GSHARD]] of "fc.weight" : memref<3x5xf32> -> memref<8xf32>
// CHECK: zrt.adamw %[[WSHARD]], %[[GSHARD]], %[[M]], %[[V]] -> %[[WSHARD]], %[[M]], %[[V]] lr
// CHECK-NEXT: zrt.free %[[GSHARD]]
// The loss is reduced over the ranks in place and copied to the loss output.
// CHECK: zrt.all_reduce %[[L:.*]] -> %[[L]] of "loss" : memref<f32> -> memref<f32>
// CHECK-NEXT: zrt.copy 4 bytes %[[L]][0] to %[[LOSS]][0]
// No state is copied back: every update was written in place.
// CHECK-NOT: zrt.copy
// CHECK: return
// Without gradient accumulation the apply function is empty.
// CHECK-LABEL: func.func @zero_program_apply
// CHECK-NEXT: return

// Stage 1: the updated shard is all-gathered straight into the replicated
// parameter's buffer, which nothing reads after the local shard is taken.
// S1-LABEL: func.func @zero_program_step
// S1-SAME: %[[W:arg2]]: memref<3x5xf32>
// S1: %[[PSHARD:.*]] = zrt.alloc optimizer : memref<8xf32>
// S1-NEXT: zrt.shard_slice %[[W]] -> %[[PSHARD]] : memref<3x5xf32> -> memref<8xf32>
// S1-NEXT: zrt.adamw %[[PSHARD]], %{{.*}}, %{{.*}}, %{{.*}} -> %[[PSHARD]],
// S1: zrt.all_gather %[[PSHARD]] -> %[[W]] of "fc.weight" : memref<8xf32> -> memref<3x5xf32>
// S1-NOT: zrt.copy {{.*}} to %[[W]]

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"},
                   %b: tensor<5xf32> {nn.param = "fc.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %y = nn.bias_add %h, %b : tensor<4x5xf32>, tensor<5xf32>
  %loss = nn.softmax_cross_entropy %y, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
