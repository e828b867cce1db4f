// RUN: zero-opt %s --nn-autodiff --zero-adamw | FileCheck %s --check-prefix=ADAMW
// RUN: zero-opt %s --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives | FileCheck %s --check-prefix=S2
// RUN: zero-opt %s --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives | FileCheck %s --check-prefix=S3

// bfloat16 parameters get float32 master copies and float32 moments: 2 + 4
// + 4 + 4 bytes per parameter, plus the 2-byte bfloat16 gradient.
// ADAMW-LABEL: func.func @train_step
// ADAMW-SAME: %[[W:[^:]*]]: tensor<3x5xbf16> {nn.param = "fc.weight"}
// ADAMW-SAME: %[[MASTER:[^:]*]]: tensor<3x5xf32> {nn.master = "fc.weight"}, %[[M:[^:]*]]: tensor<3x5xf32> {nn.adam_m = "fc.weight"}, %[[V:[^:]*]]: tensor<3x5xf32> {nn.adam_v = "fc.weight"}
// ADAMW-SAME: -> (tensor<f32>, tensor<3x5xbf16> {zero.updates = 2 : i64}, tensor<3x5xf32> {zero.updates = 3 : i64}, tensor<3x5xf32> {zero.updates = 4 : i64}, tensor<3x5xf32> {zero.updates = 5 : i64})
// ADAMW: %[[DW:.*]] = nn.matmul %{{.*}}, %{{.*}} transpose_lhs : tensor<4x3xbf16>, tensor<4x5xbf16> -> tensor<3x5xbf16>
// ADAMW: %[[NEW:.*]], %[[NM:.*]], %[[NV:.*]] = nn.adamw %[[MASTER]], %[[DW]], %[[M]], %[[V]], {{.*}} : tensor<3x5xf32>, tensor<3x5xbf16>, tensor<f32>
// ADAMW-NEXT: %[[P:.*]] = nn.cast %[[NEW]] : tensor<3x5xf32> -> tensor<3x5xbf16>
// ADAMW-NEXT: return %{{.*}}, %[[P]], %[[NEW]], %[[NM]], %[[NV]]

// Stage 2: the bfloat16 gradient is reduce-scattered as soon as it exists;
// AdamW updates the master shard; the new bfloat16 shard is gathered into
// the replicated parameter.
// S2-LABEL: func.func @train_step
// S2-SAME: tensor<8xf32> {nn.master = "fc.weight", zero.placement = #zero.placement<master, sharded>, zero.unsharded_type = tensor<3x5xf32>}
// S2: %[[DW:.*]] = nn.matmul {{.*}} -> tensor<3x5xbf16>
// S2-NEXT: %[[G:.*]] = zero.reduce_scatter %[[DW]] over @dp : tensor<3x5xbf16> -> tensor<8xbf16>
// S2: %[[NEW:.*]], %{{.*}}, %{{.*}} = nn.adamw %{{.*}}, %[[G]], {{.*}} : tensor<8xf32>, tensor<8xbf16>, tensor<f32>
// S2-NEXT: %[[S:.*]] = nn.cast %[[NEW]] : tensor<8xf32> -> tensor<8xbf16>
// S2-NEXT: %[[P:.*]] = zero.all_gather %[[S]] over @dp : tensor<8xbf16> -> tensor<3x5xbf16>
// S2: return %{{.*}}, %[[P]], %[[NEW]],

// Stage 3: the bfloat16 parameter is a shard too: the cast shard is the
// new parameter, gathered only where forward and backward use it.
// S3-LABEL: func.func @train_step
// S3-SAME: %[[W:[^:]*]]: tensor<8xbf16> {nn.param = "fc.weight", zero.placement = #zero.placement<param, sharded>, zero.unsharded_type = tensor<3x5xbf16>}
// S3: zero.all_gather %[[W]] over @dp : tensor<8xbf16> -> tensor<3x5xbf16>
// S3: %[[NEW:.*]], %{{.*}}, %{{.*}} = nn.adamw
// S3-NEXT: %[[S:.*]] = nn.cast %[[NEW]] : tensor<8xf32> -> tensor<8xbf16>
// S3-NOT: zero.all_gather
// S3: return %{{.*}}, %[[S]], %[[NEW]],

// Already split for 2 ranks: the group zero-split-batch would declare.
zero.group @dp world_size(2)

func.func @forward(%x: tensor<4x3xbf16>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xbf16> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xbf16>, tensor<3x5xbf16> -> tensor<4x5xbf16>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xbf16>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
