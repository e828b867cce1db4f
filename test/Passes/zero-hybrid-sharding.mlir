// Hybrid sharding (--shard-group-size=G, HSDP): 4 ranks in 2 groups of 2.
// The state is sharded within a group and replicated across groups; each
// pass that moves it names the group it runs over.
// RUN: zero-opt %s --zero-split-batch=world-size=4 --nn-autodiff --zero-adamw --zero-placement="stage=3 shard-group-size=2" | FileCheck %s --check-prefix=PLACE
// RUN: zero-opt %s --zero-split-batch=world-size=4 --nn-autodiff --zero-adamw --zero-placement="stage=3 shard-group-size=2" --zero-insert-collectives --zero-clip-grad-norm | FileCheck %s --check-prefix=S3
// RUN: zero-opt %s --zero-split-batch=world-size=4 --nn-autodiff --zero-adamw --zero-placement="stage=1 shard-group-size=2" --zero-insert-collectives --zero-clip-grad-norm | FileCheck %s --check-prefix=S1
// RUN: zero-opt %s --zero-split-batch=world-size=4 --nn-autodiff --zero-adamw --zero-placement="stage=1 shard-group-size=2" --zero-insert-collectives --zero-clip-grad-norm --zero-bucket-collectives=bucket-bytes=1000 | FileCheck %s --check-prefix=BUCKET
// RUN: zero-opt %s --zero-split-batch="world-size=4 micro-batches=2" --nn-autodiff --zero-adamw --zero-placement="stage=3 shard-group-size=2" --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=2 mode=sharded" | FileCheck %s --check-prefix=SHARDED
// RUN: zero-opt %s --zero-split-batch="world-size=4 micro-batches=2" --nn-autodiff --zero-adamw --zero-placement="stage=3 shard-group-size=2" --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=2 mode=local" | FileCheck %s --check-prefix=LOCAL
// RUN: zero-opt %s --zero-split-batch="world-size=4 micro-batches=2" --nn-autodiff --zero-adamw --zero-placement="stage=3 shard-group-size=2" --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=2 mode=local" --zero-exact-sums | FileCheck %s --check-prefix=EXACT
// RUN: zero-opt %s --pass-pipeline="builtin.module(zero-stage-pipeline{stage=2 world-size=4 shard-group-size=2 prefetch=-1 stop-at-zrt=true})" | FileCheck %s --check-prefix=ZRT
// RUN: zero-opt %s --pass-pipeline="builtin.module(zero-stage-pipeline{stage=2 world-size=4 shard-group-size=2 prefetch=-1 stop-at-zrt=true})" | zero-opt --zero-lower-zrt-to-calls --canonicalize | FileCheck %s --check-prefix=CALLS
// RUN: zero-opt %s --pass-pipeline="builtin.module(zero-stage-pipeline{stage=2 world-size=4 shard-group-size=2 prefetch=-1 stop-at-zrt=true ranks-per-node=2 inter-node-bandwidth=0.5})" | FileCheck %s --check-prefix=NODES

// The mesh: @dp's two axes, declared by zero-placement. Data is split over
// every rank; the state is sharded over @shard (and so replicated over
// @replica); the scalars are replicated.
// PLACE: zero.group @dp world_size(4) stage(3)
// PLACE-NEXT: zero.group @shard world_size(2) axis(shard) of @dp
// PLACE-NEXT: zero.group @replica world_size(2) axis(replica) of @dp
// PLACE-LABEL: func.func @train_step
// PLACE: {nn.data = "features", zero.placement = #zero.placement<data, sharded>}
// PLACE: {nn.param = "fc.weight", zero.placement = #zero.placement<param, sharded over @shard>}
// PLACE: {nn.adam_m = "fc.weight", zero.placement = #zero.placement<moment, sharded over @shard>}
// PLACE: {nn.hyper = "lr", zero.placement = #zero.placement<hyper, replicated>}
// PLACE: attributes {zero.grads = #zero.placement<grad, sharded over @shard>}

// Stage 3: a shard is 1/2 of the tensor (8 of 15 elements), gathered in the
// group; the gradient is reduce-scattered in the group, then the groups'
// sums are added across the replicas; the loss is summed over every rank
// and the squared norm over the group (each group holds all of it).
// S3-LABEL: func.func @train_step
// S3: %arg2: tensor<8xf32> {nn.param = "fc.weight", zero.placement = #zero.placement<param, sharded over @shard>, zero.unsharded_type = tensor<3x5xf32>}
// S3: %[[W:.*]] = zero.all_gather %arg2 over @shard : tensor<8xf32> -> tensor<3x5xf32>
// S3: %[[RS:.*]] = zero.reduce_scatter %{{.*}} over @shard : tensor<5xf32> -> tensor<3xf32>
// S3-NEXT: %[[BIAS:.*]] = zero.all_reduce %[[RS]] over @replica : tensor<3xf32>
// S3: %[[RSW:.*]] = zero.reduce_scatter %{{.*}} over @shard : tensor<3x5xf32> -> tensor<8xf32>
// S3-NEXT: %[[GW:.*]] = zero.all_reduce %[[RSW]] over @replica : tensor<8xf32>
// S3: zero.all_reduce %{{.*}} over @dp : tensor<f32>
// S3: %[[SQ:.*]] = nn.sum_squares %[[GW]]
// S3: %[[NORM:.*]] = zero.all_reduce %{{.*}} over @shard : tensor<f32>
// S3-NEXT: nn.clip_coefficient %[[NORM]]
// S3: nn.adamw %arg2, %[[GW]],

// Stages 1-2: AdamW updates this rank's shard of the replicated parameter,
// and the new shards are gathered back within the group.
// S1-LABEL: func.func @train_step
// S1: %[[SLICE:.*]] = zero.local_shard %arg2 over @shard : tensor<3x5xf32> -> tensor<8xf32>
// S1: %[[NEW:.*]], %{{.*}}, %{{.*}} = nn.adamw %[[SLICE]],
// S1-NEXT: zero.all_gather %[[NEW]] over @shard : tensor<8xf32> -> tensor<3x5xf32>

// A bucket is reduce-scattered in the group and its shard all-reduced
// across the replicas, once for both gradients.
// BUCKET-LABEL: func.func @train_step
// BUCKET: %[[PACK:.*]] = zero.pack %{{.*}}, %{{.*}} chunks(2) : tensor<3x5xf32>, tensor<5xf32> -> tensor<22xf32>
// BUCKET-NEXT: %[[SUM:.*]] = zero.reduce_scatter %[[PACK]] over @shard : tensor<22xf32> -> tensor<11xf32>
// BUCKET-NEXT: %[[ALL:.*]] = zero.all_reduce %[[SUM]] over @replica : tensor<11xf32>
// BUCKET: zero.unpack %[[ALL]] chunks(1) : tensor<11xf32> -> tensor<8xf32>, tensor<3xf32>
// BUCKET-NOT: zero.all_reduce {{.*}} over @replica

// Sharded accumulation: each micro-batch reduce-scatters in the group and
// accumulates the shard (placed over @shard); the apply step all-reduces
// the float32 accumulators across the replicas, once per step.
// SHARDED-LABEL: func.func @train_step
// SHARDED-SAME: {nn.grad_accum = "fc.weight", zero.placement = #zero.placement<grad, sharded over @shard>, zero.unsharded_type = tensor<3x5xf32>}
// SHARDED-NOT: over @replica
// SHARDED-LABEL: func.func @train_apply
// SHARDED: %[[W:.*]] = zero.all_reduce %arg15 over @replica : tensor<8xf32>
// SHARDED: nn.adamw %arg2, %[[W]],

// Local accumulation: each rank adds its own whole gradient; the apply step
// reduces it in the group, then across the replicas.
// LOCAL-LABEL: func.func @train_step
// LOCAL-NOT: zero.reduce_scatter
// LOCAL-LABEL: func.func @train_apply
// LOCAL: %[[RS:.*]] = zero.reduce_scatter %{{.*}} over @shard : tensor<3x5xf32> -> tensor<8xf32>
// LOCAL-NEXT: zero.all_reduce %[[RS]] over @replica : tensor<8xf32>

// --deterministic (zero-exact-sums) on the chain: the group reduce-scatters
// the i128 accumulator and the replicas all-reduce the integer shard it
// summed, converted to float once, at the end; the squared norm is summed
// exactly over the group.
// EXACT-LABEL: func.func @train_apply
// EXACT: %[[XRS:.*]] = zero.reduce_scatter %arg15 over @shard : tensor<3x5xi128> -> tensor<8xi128>
// EXACT-NEXT: %[[XAR:.*]] = zero.all_reduce %[[XRS]] over @replica : tensor<8xi128>
// EXACT-NEXT: %[[XG:.*]] = nn.from_exact %[[XAR]] : tensor<8xi128> -> tensor<8xf32>
// EXACT: nn.sum_squares_exact %{{.*}}, %[[XG]] of "fc.weight"
// EXACT: %[[XSQ:.*]] = zero.all_reduce %{{.*}} over @shard : tensor<i128>
// EXACT-NEXT: nn.from_exact %[[XSQ]] : tensor<i128> -> tensor<f32>
// EXACT: nn.adamw %arg2, %[[XG]],

// The zrt program declares the groups and says over which each collective
// runs (unprinted: every rank); sharded arguments are shards of 2.
// ZRT-LABEL: func.func @zero_program_describe
// ZRT: zrt.declare_program world_size 4 stage 2
// ZRT-NEXT: zrt.declare_shard_groups size(2)
// ZRT: zrt.declare_arg 2 "fc.weight" param init
// ZRT: zrt.declare_arg 4 "adam_m.fc.weight" adam_m sharded
// ZRT-LABEL: func.func @zero_program_step(%{{.*}}: memref<2x3xf32>, %{{.*}}: memref<2xi32>, %{{.*}}: memref<3x5xf32>, %{{.*}}: memref<5xf32>, %{{.*}}: memref<8xf32>
// ZRT: zrt.reduce_scatter %{{.*}} -> %{{.*}} over shard of "fc.bias"
// ZRT: zrt.all_reduce %{{.*}} -> %{{.*}} over replica of "fc.bias"
// ZRT: zrt.all_reduce %{{.*}} -> %{{.*}} of "loss"
// ZRT: zrt.all_reduce %{{.*}} -> %{{.*}} over shard of "gradient norm"
// ZRT: zrt.all_gather %{{.*}} -> %{{.*}} over shard of "fc.weight"

// The calls pass the group first: 1 shard, 2 replica, 0 every rank.
// CALLS-LABEL: func.func @zero_program_describe
// CALLS: call @zrt_declare_shard_groups(%{{.*}}, %c2_i64)
// CALLS-LABEL: func.func @zero_program_step
// CALLS: call @zrt_reduce_scatter(%{{.*}}, %c1_i32, %c0_i32,
// CALLS: call @zrt_all_reduce(%{{.*}}, %c2_i32, %c0_i32,
// CALLS: call @zrt_all_reduce(%{{.*}}, %c0_i32, %c0_i32,

// Two ranks a node, so a shard group is a node: the time model runs its
// collectives on the 5 GB/s link and the others (across the replicas, over
// every rank) at 0.5 GB/s, 20 us a ring step either way. In order: the
// bias's reduce-scatter (in the node: 20 us + 1/2 of 16 bytes at 5 GB/s)
// and its all-reduce across nodes (2 x (20 us + 1/2 of 12 bytes at
// 0.5 GB/s)), the weight's two (64 and 32 bytes), the loss over 4 ranks
// (2 x (3 x 20 us + 3/4 of 4 bytes at 0.5 GB/s)), the norm in the node.
// NODES-LABEL: func.func @zero_program_describe
// NODES: zrt.declare_collective_plan 1 queued 0 transfer 20002 exposed 20002
// NODES-NEXT: zrt.declare_collective_plan 2 queued 0 transfer 40024 exposed 40024
// NODES-NEXT: zrt.declare_collective_plan 3 queued 0 transfer 20006 exposed 20006
// NODES-NEXT: zrt.declare_collective_plan 4 queued 0 transfer 40064 exposed 40064
// NODES-NEXT: zrt.declare_collective_plan 5 queued 0 transfer 120012 exposed 120012
// NODES-NEXT: zrt.declare_collective_plan 6 queued 0 transfer 40001 exposed 40001

func.func @forward(%x: tensor<8x3xf32> {nn.data = "features"},
                   %labels: tensor<8xi32> {nn.data = "labels"},
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"},
                   %b: tensor<5xf32> {nn.param = "fc.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<8x3xf32>, tensor<3x5xf32> -> tensor<8x5xf32>
  %y = nn.bias_add %h, %b : tensor<8x5xf32>, tensor<5xf32>
  %loss = nn.softmax_cross_entropy %y, %labels : tensor<8x5xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
