// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-bucket-collectives="bucket-bytes=100" --zero-lower-to-zrt | FileCheck %s

// zero.pack and zero.unpack lower to one zrt.copy per chunk of each member
// (byte offsets into the flat buffer); the bucket buffers are
// communication memory and die right after their collective.
// Unit h.0: shards of 8 + 3 floats, gathered over 2 ranks into 22.
// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: %[[WSHARD:arg2]]: memref<8xf32>, %[[BSHARD:arg3]]: memref<3xf32>
// CHECK: %[[PACK:.*]] = zrt.alloc comm : memref<11xf32>
// CHECK-NEXT: zrt.copy 32 bytes %[[WSHARD]][0] to %[[PACK]][0]
// CHECK-NEXT: zrt.copy 12 bytes %[[BSHARD]][0] to %[[PACK]][32]
// CHECK-NEXT: %[[FLAT:.*]] = zrt.alloc comm : memref<22xf32>
// A bucket's collective is labelled with its size and first members.
// CHECK-NEXT: zrt.all_gather %[[PACK]] -> %[[FLAT]] of "bucket of 2: h.0.fc.weight, h.0.fc.bias" : memref<11xf32> -> memref<22xf32>
// CHECK-NEXT: zrt.free %[[PACK]]
// The 3x5 weight: rank 0's 8 floats at byte 0, rank 1's 7 at byte 44 (its
// chunk starts after rank 0's 11); the bias: 3 floats at 32, 2 at 76.
// CHECK-NEXT: %[[W:.*]] = zrt.alloc comm : memref<3x5xf32>
// CHECK-NEXT: %[[B:.*]] = zrt.alloc comm : memref<5xf32>
// CHECK-NEXT: zrt.copy 32 bytes %[[FLAT]][0] to %[[W]][0]
// CHECK-NEXT: zrt.copy 28 bytes %[[FLAT]][44] to %[[W]][32]
// CHECK-NEXT: zrt.copy 12 bytes %[[FLAT]][32] to %[[B]][0]
// CHECK-NEXT: zrt.copy 8 bytes %[[FLAT]][76] to %[[B]][12]
// CHECK-NEXT: zrt.free %[[FLAT]]
// A reduced bucket is gradient memory, split into gradient shards (h.0's
// bias: 3 floats, weight: 8) before the optimizer reads them.
// CHECK: zrt.reduce_scatter %{{.*}} -> %[[RS:.*]] of "bucket of 2: h.0.fc.bias, h.0.fc.weight" : memref<22xf32> -> memref<11xf32>
// CHECK: %[[GB:.*]] = zrt.alloc grad : memref<3xf32>
// CHECK-NEXT: %[[GW:.*]] = zrt.alloc grad : memref<8xf32>
// CHECK-NEXT: zrt.copy 12 bytes %[[RS]][0] to %[[GB]][0]
// CHECK-NEXT: zrt.copy 32 bytes %[[RS]][12] to %[[GW]][0]
// CHECK-NEXT: zrt.free %[[RS]]

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
