// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-bucket-collectives="bucket-bytes=100" | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=0 --zero-insert-collectives --zero-bucket-collectives="bucket-bytes=100" | FileCheck %s --check-prefix=STAGE0
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-bucket-collectives="bucket-bytes=0 gather-units=false" | FileCheck %s --check-prefix=OFF
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-bucket-collectives="bucket-bytes=100" --zero-schedule-overlap=prefetch=1 | FileCheck %s --check-prefix=OVERLAP

// Stage 3, units h.0 and h.1 (weight + bias each) and a head of its own.
// Each unit's shards are packed and gathered by one all-gather where its
// first parameter was gathered; the head is gathered alone.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W0:[^:]*]]: tensor<8xf32> {nn.param = "h.0.fc.weight"
// CHECK-SAME: %[[B0:[^:]*]]: tensor<3xf32> {nn.param = "h.0.fc.bias"
// CHECK-SAME: %[[W1:[^:]*]]: tensor<13xf32> {nn.param = "h.1.fc.weight"
// CHECK-SAME: %[[B1:[^:]*]]: tensor<3xf32> {nn.param = "h.1.fc.bias"
// CHECK: %[[P0:.*]] = zero.pack %[[W0]], %[[B0]] chunks(1) : tensor<8xf32>, tensor<3xf32> -> tensor<11xf32>
// CHECK-NEXT: %[[G0:.*]] = zero.all_gather %[[P0]] over @dp : tensor<11xf32> -> tensor<22xf32>
// CHECK-NEXT: %[[U0:.*]]:2 = zero.unpack %[[G0]] chunks(2) : tensor<22xf32> -> tensor<3x5xf32>, tensor<5xf32>
// CHECK-NEXT: nn.matmul %{{.*}}, %[[U0]]#0
// Releases stay per parameter, after each one's last use.
// CHECK-NEXT: zero.release %[[U0]]#0
// CHECK-NEXT: nn.bias_add %{{.*}}, %[[U0]]#1
// CHECK-NEXT: zero.release %[[U0]]#1
// CHECK: zero.pack %[[W1]], %[[B1]] chunks(1)
// CHECK: zero.all_gather %{{.*}} over @dp : tensor<5xf32> -> tensor<5x2xf32>

// Backward: gradients in production order, in buckets of at most 100
// bytes. Head weight (40 B) + h.1 bias (20 B) make a bucket; h.1's weight
// (100 B) does not fit after them and is reduced alone; h.0's bias (20 B)
// and weight (60 B) make the last bucket. A reduce-scatter's bucket is laid
// out in 2 chunks (one per rank), and each is reduced as soon as its last
// gradient exists.
// CHECK: %[[BK1:.*]] = zero.pack %{{.*}}, %{{.*}} chunks(2) : tensor<5x2xf32>, tensor<5xf32> -> tensor<16xf32>
// CHECK-NEXT: %[[R1:.*]] = zero.reduce_scatter %[[BK1]] over @dp : tensor<16xf32> -> tensor<8xf32>
// CHECK: zero.reduce_scatter %{{.*}} over @dp : tensor<5x5xf32> -> tensor<13xf32>
// CHECK: %[[BK2:.*]] = zero.pack %{{.*}}, %{{.*}} chunks(2) : tensor<5xf32>, tensor<3x5xf32> -> tensor<22xf32>
// CHECK-NEXT: %[[R2:.*]] = zero.reduce_scatter %[[BK2]] over @dp : tensor<22xf32> -> tensor<11xf32>
// The shards are split out just before their first use (the optimizer).
// CHECK-NEXT: zero.unpack %[[R2]] chunks(1) : tensor<11xf32> -> tensor<3xf32>, tensor<8xf32>
// CHECK-NEXT: nn.adamw
// CHECK: zero.unpack %[[R1]] chunks(1) : tensor<8xf32> -> tensor<5xf32>, tensor<3xf32>
// CHECK-NEXT: nn.adamw

// Stage 0: the all-reduces of gradients are bucketed the same way (one
// chunk); the loss's all-reduce is not a gradient and stays alone.
// STAGE0-LABEL: func.func @train_step
// STAGE0: %[[B:.*]] = zero.pack %{{.*}}, %{{.*}} chunks(1) : tensor<5x2xf32>, tensor<5xf32> -> tensor<15xf32>
// STAGE0-NEXT: %[[R:.*]] = zero.all_reduce %[[B]] over @dp : tensor<15xf32>
// STAGE0: zero.all_reduce %{{.*}} over @dp : tensor<5x5xf32>
// STAGE0: zero.pack %{{.*}}, %{{.*}} chunks(1) : tensor<5xf32>, tensor<3x5xf32> -> tensor<20xf32>
// STAGE0: zero.unpack %[[R]] chunks(1) : tensor<15xf32> -> tensor<5x2xf32>, tensor<5xf32>
// STAGE0: zero.all_reduce %{{.*}} over @dp : tensor<f32>

// Both off: the collectives of zero-insert-collectives, untouched.
// OFF-NOT: zero.pack
// OFF-NOT: zero.unpack

// Prefetch carries a unit's pack with its gather: h.1's bucket is packed
// and started as h.0's gathered copy is waited for.
// OVERLAP-LABEL: func.func @train_step
// OVERLAP: %[[S0:.*]] = zero.all_gather_start %{{.*}} : tensor<11xf32>
// OVERLAP-NEXT: zero.pack %{{.*}}, %{{.*}} chunks(1) : tensor<13xf32>, tensor<3xf32> -> tensor<16xf32>
// OVERLAP-NEXT: zero.all_gather_start %{{.*}} : tensor<16xf32>
// OVERLAP-NEXT: %[[G0:.*]] = zero.wait %[[S0]]
// OVERLAP-NEXT: zero.unpack %[[G0]] chunks(2)

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
