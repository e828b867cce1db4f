// RUN: zero-opt %s | FileCheck %s
// RUN: zero-opt %s | zero-opt | FileCheck %s

// The groups the ops below run over: a module states each world size once.
// CHECK: zero.group @dp3 world_size(3){{$}}
// CHECK: zero.group @dp4 world_size(4) stage(3)
zero.group @dp3 world_size(3)
zero.group @dp4 world_size(4) stage(3)

// Hybrid sharding: @dp4's mesh of 2 replicas of 2 shards.
// CHECK: zero.group @shard world_size(2) axis(shard) of @dp4
// CHECK: zero.group @replica world_size(2) axis(replica) of @dp4
zero.group @shard world_size(2) axis(shard) of @dp4
zero.group @replica world_size(2) axis(replica) of @dp4

// A shard over @shard holds half the tensor; gradients go through both axes.
// CHECK-LABEL: func.func @hybrid
// CHECK-SAME: zero.placement = #zero.placement<param, sharded over @shard>
func.func @hybrid(%w_shard: tensor<190xf32> {zero.placement = #zero.placement<param, sharded over @shard>, zero.unsharded_type = tensor<19x20xf32>},
                  %g: tensor<19x20xf32>) -> (tensor<19x20xf32>, tensor<190xf32>) {
  // CHECK: zero.all_gather %{{.*}} over @shard : tensor<190xf32> -> tensor<19x20xf32>
  %w = zero.all_gather %w_shard over @shard : tensor<190xf32> -> tensor<19x20xf32>
  // CHECK: %[[S:.*]] = zero.reduce_scatter %{{.*}} over @shard : tensor<19x20xf32> -> tensor<190xf32>
  %s = zero.reduce_scatter %g over @shard : tensor<19x20xf32> -> tensor<190xf32>
  // CHECK: zero.all_reduce %[[S]] over @replica : tensor<190xf32>
  %r = zero.all_reduce %s over @replica : tensor<190xf32>
  return %w, %r : tensor<19x20xf32>, tensor<190xf32>
}

// CHECK-LABEL: func.func @collectives
// CHECK-SAME: zero.placement = #zero.placement<param, sharded>
// CHECK-SAME: zero.placement = #zero.placement<moment, replicated>
func.func @collectives(%w_shard: tensor<95xf32> {zero.placement = #zero.placement<param, sharded>},
                       %m: tensor<19x20xf32> {zero.placement = #zero.placement<moment, replicated>},
                       %loss: tensor<f32>) -> (tensor<95xf32>, tensor<f32>, tensor<95xf32>) {
  // CHECK: %[[W:.*]] = zero.all_gather %{{.*}} over @dp4 : tensor<95xf32> -> tensor<19x20xf32>
  %w = zero.all_gather %w_shard over @dp4 : tensor<95xf32> -> tensor<19x20xf32>
  // CHECK: zero.reduce_scatter %[[W]] over @dp4 : tensor<19x20xf32> -> tensor<95xf32>
  %g = zero.reduce_scatter %w over @dp4 : tensor<19x20xf32> -> tensor<95xf32>
  // CHECK: zero.local_shard %{{.*}} over @dp4 : tensor<19x20xf32> -> tensor<95xf32>
  %s = zero.local_shard %m over @dp4 : tensor<19x20xf32> -> tensor<95xf32>
  // CHECK-NEXT: zero.release %[[W]] : tensor<19x20xf32>
  zero.release %w : tensor<19x20xf32>
  // CHECK: zero.all_reduce %{{.*}} over @dp4 : tensor<f32>
  %l = zero.all_reduce %loss over @dp4 : tensor<f32>
  return %g, %l, %s : tensor<95xf32>, tensor<f32>, tensor<95xf32>
}

// A tensor smaller than the group: every shard still has one element, the
// last ranks hold only padding.
// CHECK-LABEL: func.func @tiny
func.func @tiny(%b: tensor<1xf32>) -> tensor<2xf32> {
  // CHECK: zero.all_gather %{{.*}} over @dp3 : tensor<1xf32> -> tensor<2xf32>
  %full = zero.all_gather %b over @dp3 : tensor<1xf32> -> tensor<2xf32>
  return %full : tensor<2xf32>
}

// Asynchronous forms: the tensor exists only after the wait.
// CHECK-LABEL: func.func @async
func.func @async(%w_shard: tensor<95xf32>, %g: tensor<19x20xbf16>, %l: tensor<f32>)
    -> (tensor<19x20xf32>, tensor<95xbf16>, tensor<f32>) {
  // CHECK: %[[F:.*]] = zero.all_gather_start %{{.*}} over @dp4 : tensor<95xf32> -> !zero.future<tensor<19x20xf32>>
  %f = zero.all_gather_start %w_shard over @dp4 : tensor<95xf32> -> !zero.future<tensor<19x20xf32>>
  // CHECK: zero.reduce_scatter_start %{{.*}} over @dp4 : tensor<19x20xbf16> -> !zero.future<tensor<95xbf16>>
  %r = zero.reduce_scatter_start %g over @dp4 : tensor<19x20xbf16> -> !zero.future<tensor<95xbf16>>
  // CHECK: zero.all_reduce_start %{{.*}} over @dp4 : tensor<f32> -> !zero.future<tensor<f32>>
  %a = zero.all_reduce_start %l over @dp4 : tensor<f32> -> !zero.future<tensor<f32>>
  // CHECK: zero.wait %[[F]] : !zero.future<tensor<19x20xf32>>
  %w = zero.wait %f : !zero.future<tensor<19x20xf32>>
  %gs = zero.wait %r : !zero.future<tensor<95xbf16>>
  %ls = zero.wait %a : !zero.future<tensor<f32>>
  return %w, %gs, %ls : tensor<19x20xf32>, tensor<95xbf16>, tensor<f32>
}

// A bucket: two gradients laid out rank by rank for a reduce-scatter over 2
// ranks (ceil(20/2) + ceil(3/2) = 12 elements per chunk), and the shards
// it returns split back.
// CHECK-LABEL: func.func @buckets
func.func @buckets(%g1: tensor<4x5xf32>, %g2: tensor<3xf32>, %s: tensor<12xf32>) -> (tensor<24xf32>, tensor<10xf32>, tensor<2xf32>) {
  // CHECK: zero.pack %{{.*}}, %{{.*}} chunks(2) : tensor<4x5xf32>, tensor<3xf32> -> tensor<24xf32>
  %b = zero.pack %g1, %g2 chunks(2) : tensor<4x5xf32>, tensor<3xf32> -> tensor<24xf32>
  // CHECK: zero.unpack %{{.*}} chunks(1) : tensor<12xf32> -> tensor<10xf32>, tensor<2xf32>
  %u:2 = zero.unpack %s chunks(1) : tensor<12xf32> -> tensor<10xf32>, tensor<2xf32>
  return %b, %u#0, %u#1 : tensor<24xf32>, tensor<10xf32>, tensor<2xf32>
}

// Optimizer offload: moments in host memory, an update on the host between
// a copy down and a copy up.
// CHECK-LABEL: func.func @offload
// CHECK-SAME: zero.placement = #zero.placement<moment, sharded in host>
// CHECK-SAME: zero.placement = #zero.placement<master, replicated over @shard in host>
func.func @offload(%m: tensor<95xf32> {zero.placement = #zero.placement<moment, sharded in host>},
                   %master: tensor<95xf32> {zero.placement = #zero.placement<master, replicated over @shard in host>},
                   %g: tensor<95xf32>) -> tensor<95xf32> {
  // CHECK: %[[H:.*]] = zero.to_host %{{.*}} : tensor<95xf32>
  %h = zero.to_host %g : tensor<95xf32>
  // CHECK: %[[C:.*]] = nn.cast %[[H]] {zero.host} : tensor<95xf32> -> tensor<95xbf16>
  %c = nn.cast %h {zero.host} : tensor<95xf32> -> tensor<95xbf16>
  // CHECK: zero.to_device %[[C]] : tensor<95xbf16>
  %d = zero.to_device %c : tensor<95xbf16>
  // A host argument goes to the device as it is.
  // CHECK: zero.to_device %{{.*}} : tensor<95xf32>
  %e = zero.to_device %m : tensor<95xf32>
  return %e : tensor<95xf32>
}
