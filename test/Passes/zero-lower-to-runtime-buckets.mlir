// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement="stage=3 world-size=2" --zero-insert-collectives --zero-bucket-collectives="bucket-bytes=100" --zero-lower-to-runtime --canonicalize | FileCheck %s

// zero.pack and zero.unpack lower to one zrt_copy per chunk of each member
// (byte offsets into the flat buffer); the bucket buffers are
// communication memory (category 4) and die right after their collective.
// Unit h.0: shards of 8 + 3 floats, gathered over 2 ranks into 22.
// CHECK-LABEL: func @zero_program_step
// CHECK: %[[PACK:.*]] = call @zrt_alloc(%arg0, %c44_i64, %c4_i32)
// CHECK-NEXT: call @zrt_copy(%arg0, %{{.*}}, %[[PACK]], %c32_i64)
// CHECK-NEXT: %[[AT32:.*]] = llvm.getelementptr %[[PACK]][32] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT: call @zrt_copy(%arg0, %{{.*}}, %[[AT32]], %c12_i64)
// CHECK-NEXT: %[[FLAT:.*]] = call @zrt_alloc(%arg0, %c88_i64, %c4_i32)
// CHECK-NEXT: call @zrt_all_gather(%arg0, %c0_i32, %[[PACK]], %[[FLAT]], %c22_i64, %c11_i64)
// CHECK-NEXT: call @zrt_free(%arg0, %[[PACK]])
// The 3x5 weight: rank 0's 8 floats at byte 0, rank 1's 7 at byte 44 (its
// chunk starts after rank 0's 11); the bias: 3 floats at 32, 2 at 76.
// CHECK-NEXT: %[[W:.*]] = call @zrt_alloc(%arg0, %c60_i64, %c4_i32)
// CHECK-NEXT: %[[B:.*]] = call @zrt_alloc(%arg0, %c20_i64, %c4_i32)
// CHECK-NEXT: call @zrt_copy(%arg0, %[[FLAT]], %[[W]], %c32_i64)
// CHECK-NEXT: %[[W32:.*]] = llvm.getelementptr %[[W]][32]
// CHECK-NEXT: %[[F44:.*]] = llvm.getelementptr %[[FLAT]][44]
// CHECK-NEXT: call @zrt_copy(%arg0, %[[F44]], %[[W32]], %c28_i64)
// CHECK-NEXT: %[[F32:.*]] = llvm.getelementptr %[[FLAT]][32]
// CHECK-NEXT: call @zrt_copy(%arg0, %[[F32]], %[[B]], %c12_i64)
// CHECK-NEXT: %[[B12:.*]] = llvm.getelementptr %[[B]][12]
// CHECK-NEXT: %[[F76:.*]] = llvm.getelementptr %[[FLAT]][76]
// CHECK-NEXT: call @zrt_copy(%arg0, %[[F76]], %[[B12]], %c8_i64)
// CHECK-NEXT: call @zrt_free(%arg0, %[[FLAT]])
// A reduced bucket is gradient memory (category 1), split into gradient
// shards (h.0's bias: 3 floats, weight: 8) before the optimizer reads them.
// CHECK: call @zrt_reduce_scatter(%arg0, %c0_i32, %{{.*}}, %[[RS:.*]], %c22_i64, %c11_i64)
// CHECK: %[[GB:.*]] = call @zrt_alloc(%arg0, %c12_i64, %c1_i32)
// CHECK-NEXT: %[[GW:.*]] = call @zrt_alloc(%arg0, %c32_i64, %c1_i32)
// CHECK-NEXT: call @zrt_copy(%arg0, %[[RS]], %[[GB]], %c12_i64)
// CHECK-NEXT: %[[R12:.*]] = llvm.getelementptr %[[RS]][12]
// CHECK-NEXT: call @zrt_copy(%arg0, %[[R12]], %[[GW]], %c32_i64)
// CHECK-NEXT: call @zrt_free(%arg0, %[[RS]])

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
