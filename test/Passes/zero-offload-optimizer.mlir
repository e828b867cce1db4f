// Optimizer offload (--offload=optimizer, ZeRO-Offload): the moments and
// master weights live in host memory and AdamW runs on the host; what it
// reads from the device is copied down once, and each new parameter the
// device reads is copied up.
// RUN: zero-opt %s --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=1 --zero-insert-collectives --zero-clip-grad-norm --zero-offload-optimizer | FileCheck %s --check-prefix=S1
// RUN: zero-opt %s --zero-split-batch="world-size=2 micro-batches=2" --nn-autodiff --zero-adamw --zero-placement=stage=2 --zero-insert-collectives --zero-clip-grad-norm --zero-accumulate-gradients="micro-batches=2 mode=local" --zero-offload-optimizer | FileCheck %s --check-prefix=LOCAL
// RUN: zero-opt %S/Inputs/offload-bf16.mlir --zero-split-batch=world-size=2 --nn-autodiff --zero-adamw --zero-placement=stage=3 --zero-insert-collectives --zero-clip-grad-norm --zero-offload-optimizer | FileCheck %s --check-prefix=BF16
// RUN: zero-opt %S/Inputs/offload-bf16.mlir --pass-pipeline="builtin.module(zero-stage-pipeline{stage=3 world-size=2 offload=optimizer prefetch=-1 stop-at-zrt=true})" | FileCheck %s --check-prefix=ZRT
// RUN: zero-opt %S/Inputs/offload-bf16.mlir --pass-pipeline="builtin.module(zero-stage-pipeline{stage=3 world-size=2 offload=optimizer prefetch=-1 stop-at-zrt=true})" | zero-opt --zero-lower-zrt-to-calls --canonicalize | FileCheck %s --check-prefix=CALLS

func.func @forward(%x: tensor<8x3xf32> {nn.data = "features"},
                   %labels: tensor<8xi32> {nn.data = "labels"},
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"},
                   %b: tensor<5xf32> {nn.param = "fc.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<8x3xf32>, tensor<3x5xf32> -> tensor<8x5xf32>
  %y = nn.bias_add %h, %b : tensor<8x5xf32>, tensor<5xf32>
  %loss = nn.softmax_cross_entropy %y, %labels : tensor<8x5xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// Stage 1, fp32: the moments are placed in host memory, the parameters
// stay on the device. The local shard of the parameter and the gradient
// shard go down, with the hyperparameters and the clipping coefficient
// (once for both updates); the new shard comes up to be gathered.
// S1-LABEL: func.func @train_step
// S1-SAME: {nn.param = "fc.weight", zero.placement = #zero.placement<param, replicated>}
// S1-SAME: {nn.adam_m = "fc.weight", zero.placement = #zero.placement<moment, sharded in host>
// S1-SAME: {nn.adam_v = "fc.bias", zero.placement = #zero.placement<moment, sharded in host>
// S1-SAME: {nn.hyper = "lr", zero.placement = #zero.placement<hyper, replicated>}
// S1: %[[G:.*]] = zero.reduce_scatter %{{.*}} over @dp : tensor<3x5xf32> -> tensor<8xf32>
// S1: %[[P:.*]] = zero.local_shard %{{.*}} over @dp : tensor<3x5xf32> -> tensor<8xf32>
// S1: %[[CLIP:.*]] = nn.clip_coefficient
// S1-NEXT: %[[HP:.*]] = zero.to_host %[[P]] : tensor<8xf32>
// S1-NEXT: %[[HG:.*]] = zero.to_host %[[G]] : tensor<8xf32>
// S1-NEXT: %[[LR:.*]] = zero.to_host %{{.*}} : tensor<f32>
// S1-COUNT-5: zero.to_host %{{.*}} : tensor<f32>
// S1-NEXT: %[[HCLIP:.*]] = zero.to_host %[[CLIP]] : tensor<f32>
// S1-NEXT: %[[NEW:.*]], %{{.*}}, %{{.*}} = nn.adamw %[[HP]], %[[HG]], %{{.*}}, lr = %[[LR]], {{.*}} grad_scale = %[[HCLIP]] : tensor<f32> {zero.host}
// S1-NEXT: %[[UP:.*]] = zero.to_device %[[NEW]] : tensor<8xf32>
// S1-NEXT: %[[W:.*]] = zero.all_gather %[[UP]] over @dp : tensor<8xf32> -> tensor<3x5xf32>
// The bias's update reuses the host copies of the scalars.
// S1: nn.adamw %{{.*}}, %{{.*}}, lr = %[[LR]], {{.*}} grad_scale = %[[HCLIP]] : tensor<f32> {zero.host}
// S1-NOT: zero.to_host
// S1: return %{{.*}}, %[[W]],

// Local accumulation: the updates are in @train_apply; the micro-step
// holds no optimizer op and no copy.
// LOCAL-LABEL: func.func @train_step
// LOCAL-SAME: zero.placement = #zero.placement<moment, sharded in host>
// LOCAL-NOT: zero.to_host
// LOCAL-LABEL: func.func @train_apply
// LOCAL-SAME: zero.placement = #zero.placement<moment, sharded in host>
// LOCAL: %[[G:.*]] = zero.reduce_scatter %{{.*}} over @dp : tensor<3x5xf32> -> tensor<8xf32>
// LOCAL: zero.to_host %[[G]] : tensor<8xf32>
// LOCAL: nn.adamw {{.*}} {zero.host}
// LOCAL-NEXT: %[[UP:.*]] = zero.to_device
// LOCAL-NEXT: zero.all_gather %[[UP]] over @dp

// bf16 at stage 3: the float32 master is in host memory too; the update
// reads it in place, returns the new master into it, and casts it to the
// bf16 parameter on the host, so that half the bytes come up.
// BF16-LABEL: func.func @train_step
// BF16-SAME: {nn.param = "fc.weight", zero.placement = #zero.placement<param, sharded>
// BF16-SAME: {nn.master = "fc.weight", zero.placement = #zero.placement<master, sharded in host>
// BF16: %[[G:.*]] = zero.reduce_scatter %{{.*}} over @dp : tensor<3x5xbf16> -> tensor<8xbf16>
// BF16: %[[HG:.*]] = zero.to_host %[[G]] : tensor<8xbf16>
// BF16: %[[NEW:.*]], %[[M:.*]], %[[V:.*]] = nn.adamw %arg3, %[[HG]], %arg4, %arg5, {{.*}} {zero.host}
// BF16-NEXT: %[[CAST:.*]] = nn.cast %[[NEW]] {zero.host} : tensor<8xf32> -> tensor<8xbf16>
// BF16-NEXT: %[[UP:.*]] = zero.to_device %[[CAST]] : tensor<8xbf16>
// BF16-NEXT: return %{{.*}}, %[[UP]], %[[NEW]], %[[M]], %[[V]]

// The zrt program: the host state is declared `host`; the copies stage
// through host_staging buffers, which zero-plan-memory places in a host
// arena of their own (beside the device's shared one); the update and the
// cast run on the host, as a host task (zero-overlap-offload), and the
// bf16 parameter shard is written in place. The task's host buffers live
// to the end of the step: 576 bytes of staging instead of 512.
// ZRT-LABEL: func.func @zero_program_describe
// ZRT: zrt.declare_arg 2 "fc.weight" param sharded init
// ZRT-NEXT: zrt.declare_arg 3 "fc.weight" master sharded host init
// ZRT-NEXT: zrt.declare_arg 4 "adam_m.fc.weight" adam_m sharded host init
// ZRT-NEXT: zrt.declare_arg 5 "adam_v.fc.weight" adam_v sharded host init
// ZRT-NEXT: zrt.declare_arg 6 "lr" lr init
// ZRT: zrt.declare_shared_arena
// ZRT-NEXT: zrt.declare_arena host_staging 576
// ZRT-LABEL: func.func @zero_program_step
// ZRT-SAME: zrt.arena_bytes = array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, 0, 576>
// The staging buffers are written whole by their first op
// (zero-elide-zero-fills): no zero-fill.
// ZRT: %[[G:.*]] = zrt.alloc host_staging {arena_offset = {{[0-9]+}} : i64, unfilled} : memref<8xbf16>
// ZRT-NEXT: zrt.copy_to_host %{{.*}} to %[[G]] : memref<8xbf16>
// ZRT: %[[P:.*]] = zrt.alloc host_staging {arena_offset = {{[0-9]+}} : i64, unfilled} : memref<8xbf16>
// ZRT-NEXT: zrt.host_task_begin
// ZRT-NEXT: zrt.adamw %arg3, %[[G]], %arg4, %arg5 -> %arg3, %arg4, %arg5 {{.*}} on_host
// ZRT-NEXT: zrt.cast %arg3 -> %[[P]] on_host : memref<8xf32> -> memref<8xbf16>
// ZRT-NEXT: zrt.copy_to_device %[[P]] to %arg2 : memref<8xbf16>
// ZRT-NEXT: zrt.host_task_end writes %arg2 : memref<8xbf16>
// ZRT: zrt.free %[[P]]
// ZRT-NEXT: return

// CALLS-LABEL: func.func @zero_program_describe
// CALLS-COUNT-3: call @zrt_declare_host_arg
// CALLS-LABEL: func.func @zero_program_step
// CALLS: call @zrt_copy_to_host
// CALLS: call @zrt_host_task_begin
// CALLS-NEXT: call @zrt_host_adamw
// CALLS: call @zrt_host_cast
// CALLS-NEXT: call @zrt_copy_to_device
// CALLS-NEXT: call @zrt_host_task_end
