// RUN: zero-opt %s --split-input-file --zero-overlap-offload | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-overlap-offload --zero-lower-zrt-to-calls --canonicalize | FileCheck %s --check-prefix=CALLS

// Stage 3, float32: the parameter's shard is an argument, gathered in the
// forward and updated on the host at the end. The update and its upload
// become a host task; the next step waits for it just before the gather,
// and the step's first host buffer waits for every task of the step
// before. The host buffers the task reads are freed at the end.
// CHECK-LABEL: func.func @zero_program_step
// CHECK-NEXT: %[[FULL:.*]] = zrt.alloc comm
// CHECK-NEXT: zrt.host_wait %[[P:arg0]] : memref<8xf32>
// CHECK-NEXT: zrt.all_gather_start %[[P]] -> %[[FULL]]
// CHECK: zrt.host_wait_all
// CHECK-NEXT: %[[HP:.*]] = zrt.alloc host_staging
// CHECK-NEXT: zrt.copy_to_host %[[P]] to %[[HP]]
// CHECK-NEXT: %[[HG:.*]] = zrt.alloc host_staging
// CHECK-NEXT: zrt.copy_to_host %{{.*}} to %[[HG]]
// CHECK-NEXT: zrt.free %[[G:.*]] : memref<8xf32>
// CHECK-NEXT: zrt.host_task_begin
// CHECK-NEXT: zrt.adamw %[[HP]], %[[HG]], {{.*}} on_host
// CHECK-NEXT: zrt.copy_to_device %[[HP]] to %[[P]]
// CHECK-NEXT: zrt.host_task_end writes %[[P]] : memref<8xf32>
// CHECK-NEXT: zrt.free %[[HG]]
// CHECK-NEXT: zrt.free %[[HP]]
// CHECK-NEXT: return

// CALLS-LABEL: func.func @zero_program_step
// CALLS: call @zrt_host_wait(%arg0, %[[PP:.*]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CALLS-NEXT: call @zrt_all_gather_start(%arg0, %{{.*}}, %{{.*}}, %[[PP]],
// CALLS: call @zrt_host_wait_all(%arg0) : (!llvm.ptr) -> ()
// CALLS: call @zrt_host_task_begin(%arg0) : (!llvm.ptr) -> ()
// CALLS-NEXT: call @zrt_host_adamw
// CALLS-NEXT: call @zrt_copy_to_device(%arg0, %{{.*}}, %[[PP]],
// CALLS-NEXT: call @zrt_host_task_end(%arg0, %[[PP]]) : (!llvm.ptr, !llvm.ptr) -> ()
func.func @zero_program_step(%p: memref<8xf32>, %m: memref<8xf32>,
                             %v: memref<8xf32>, %lr: memref<f32>,
                             %t: memref<f32>, %b1: memref<f32>,
                             %b2: memref<f32>, %eps: memref<f32>,
                             %wd: memref<f32>, %loss: memref<f32> {zrt.loss}) {
  %full = zrt.alloc comm {arena_offset = 0 : i64} : memref<16xf32>
  %h = zrt.all_gather_start %p -> %full of "w" : memref<8xf32> -> memref<16xf32>
  zrt.wait %h
  %g = zrt.alloc grad {arena_offset = 64 : i64} : memref<8xf32>
  zrt.fill %g with 1.0 : memref<8xf32>
  zrt.free %full : memref<16xf32>
  %hp = zrt.alloc host_staging : memref<8xf32>
  zrt.copy_to_host %p to %hp : memref<8xf32>
  %hg = zrt.alloc host_staging : memref<8xf32>
  zrt.copy_to_host %g to %hg : memref<8xf32>
  zrt.free %g : memref<8xf32>
  zrt.adamw %hp, %hg, %m, %v -> %hp, %m, %v lr %lr step %t beta1 %b1 beta2 %b2 eps %eps weight_decay %wd on_host : memref<8xf32>, memref<8xf32>, memref<f32>
  zrt.free %hg : memref<8xf32>
  zrt.copy_to_device %hp to %p : memref<8xf32>
  zrt.free %hp : memref<8xf32>
  return
}

// -----

// Stages 1-2, bf16: the new master's cast and the new shard's device
// buffer are allocated inside the chain; the allocations move before the
// task (the main thread allocates, the task writes), and the gather of the
// new shard in the same step waits for the task.
// CHECK-LABEL: func.func @zero_program_step
// CHECK: zrt.host_wait_all
// CHECK-NEXT: %[[HG:.*]] = zrt.alloc host_staging
// CHECK-NEXT: zrt.copy_to_host %{{.*}} to %[[HG]]
// CHECK-NEXT: zrt.free
// CHECK-NEXT: %[[CAST:.*]] = zrt.alloc host_staging : memref<8xbf16>
// CHECK-NEXT: %[[SHARD:.*]] = zrt.alloc comm : memref<8xbf16>
// CHECK-NEXT: zrt.host_task_begin
// CHECK-NEXT: zrt.adamw %[[MASTER:arg1]], {{.*}} on_host
// CHECK-NEXT: zrt.cast %[[MASTER]] -> %[[CAST]] on_host
// CHECK-NEXT: zrt.copy_to_device %[[CAST]] to %[[SHARD]]
// CHECK-NEXT: zrt.host_task_end writes %[[SHARD]] : memref<8xbf16>
// CHECK-NEXT: zrt.host_wait %[[SHARD]] : memref<8xbf16>
// CHECK-NEXT: zrt.all_gather_start %[[SHARD]] -> %[[PARAM:arg0]]
// The parameter itself is no task's output: no wait before its use; the
// host buffers are freed at the end.
// CHECK-NOT: zrt.host_wait %[[PARAM]]
// CHECK: zrt.free %[[HG]]
// CHECK-NEXT: zrt.free %[[CAST]]
// CHECK-NEXT: return
func.func @zero_program_step(%param: memref<16xbf16>, %master: memref<8xf32>,
                             %m: memref<8xf32>, %v: memref<8xf32>,
                             %lr: memref<f32>, %t: memref<f32>,
                             %b1: memref<f32>, %b2: memref<f32>,
                             %eps: memref<f32>, %wd: memref<f32>,
                             %loss: memref<f32> {zrt.loss}) {
  %g = zrt.alloc grad : memref<8xbf16>
  zrt.fill %g with 1.0 : memref<8xbf16>
  %hg = zrt.alloc host_staging : memref<8xbf16>
  zrt.copy_to_host %g to %hg : memref<8xbf16>
  zrt.free %g : memref<8xbf16>
  zrt.adamw %master, %hg, %m, %v -> %master, %m, %v lr %lr step %t beta1 %b1 beta2 %b2 eps %eps weight_decay %wd on_host : memref<8xf32>, memref<8xbf16>, memref<f32>
  zrt.free %hg : memref<8xbf16>
  %cast = zrt.alloc host_staging : memref<8xbf16>
  zrt.cast %master -> %cast on_host : memref<8xf32> -> memref<8xbf16>
  %shard = zrt.alloc comm : memref<8xbf16>
  zrt.copy_to_device %cast to %shard : memref<8xbf16>
  zrt.free %cast : memref<8xbf16>
  %h = zrt.all_gather_start %shard -> %param of "w" : memref<8xbf16> -> memref<16xbf16>
  zrt.wait %h
  zrt.free %shard : memref<8xbf16>
  %x = zrt.alloc activation : memref<16xbf16>
  zrt.add %param, %param -> %x : memref<16xbf16>
  zrt.free %x : memref<16xbf16>
  return
}

// -----

// An update whose upload does not follow it directly (another kernel in
// between) is left as it is: it runs at once, as without the pass. The
// function still has a task, so the pass has something to do.
// CHECK-LABEL: func.func @zero_program_step
// CHECK: zrt.host_task_begin
// CHECK-NEXT: zrt.adamw %[[HP:.*]], {{.*}} on_host
// CHECK-NEXT: zrt.copy_to_device
// CHECK-NEXT: zrt.host_task_end
// CHECK: zrt.adamw {{.*}} on_host
// CHECK-NEXT: zrt.add
// CHECK-NEXT: zrt.copy_to_device
// CHECK-NOT: zrt.host_task_end
func.func @zero_program_step(%p: memref<8xf32>, %q: memref<8xf32>,
                             %hp: memref<8xf32>, %hq: memref<8xf32>,
                             %hg: memref<8xf32>, %m: memref<8xf32>,
                             %v: memref<8xf32>, %lr: memref<f32>,
                             %t: memref<f32>, %b1: memref<f32>,
                             %b2: memref<f32>, %eps: memref<f32>,
                             %wd: memref<f32>, %loss: memref<f32> {zrt.loss}) {
  zrt.adamw %hp, %hg, %m, %v -> %hp, %m, %v lr %lr step %t beta1 %b1 beta2 %b2 eps %eps weight_decay %wd on_host : memref<8xf32>, memref<8xf32>, memref<f32>
  zrt.copy_to_device %hp to %p : memref<8xf32>
  zrt.adamw %hq, %hg, %m, %v -> %hq, %m, %v lr %lr step %t beta1 %b1 beta2 %b2 eps %eps weight_decay %wd on_host : memref<8xf32>, memref<8xf32>, memref<f32>
  zrt.add %hq, %hq -> %hq : memref<8xf32>
  zrt.copy_to_device %hq to %q : memref<8xf32>
  return
}

// -----

// Gradient accumulation: the updates are in the apply function, which takes
// the step's arguments; the micro-steps read the parameter, so the step
// function waits for its task too, before its first read.
// CHECK-LABEL: func.func @zero_program_step
// CHECK-NEXT: %[[FULL:.*]] = zrt.alloc comm
// CHECK-NEXT: zrt.host_wait %[[P:arg0]] : memref<8xf32>
// CHECK-NEXT: zrt.all_gather_start %[[P]] -> %[[FULL]]
// CHECK-NOT: zrt.host_wait_all
// CHECK-LABEL: func.func @zero_program_apply
// CHECK: zrt.host_task_begin
// CHECK-NEXT: zrt.adamw
// CHECK-NEXT: zrt.copy_to_device %{{.*}} to %arg0
// CHECK-NEXT: zrt.host_task_end writes %arg0
func.func @zero_program_step(%p: memref<8xf32>, %hp: memref<8xf32>,
                             %hg: memref<8xf32>, %m: memref<8xf32>,
                             %v: memref<8xf32>, %lr: memref<f32>,
                             %t: memref<f32>, %b1: memref<f32>,
                             %b2: memref<f32>, %eps: memref<f32>,
                             %wd: memref<f32>, %loss: memref<f32> {zrt.loss}) {
  %full = zrt.alloc comm : memref<16xf32>
  %h = zrt.all_gather_start %p -> %full of "w" : memref<8xf32> -> memref<16xf32>
  zrt.wait %h
  zrt.free %full : memref<16xf32>
  return
}
func.func @zero_program_apply(%p: memref<8xf32>, %hp: memref<8xf32>,
                              %hg: memref<8xf32>, %m: memref<8xf32>,
                              %v: memref<8xf32>, %lr: memref<f32>,
                              %t: memref<f32>, %b1: memref<f32>,
                              %b2: memref<f32>, %eps: memref<f32>,
                              %wd: memref<f32>) {
  zrt.adamw %hp, %hg, %m, %v -> %hp, %m, %v lr %lr step %t beta1 %b1 beta2 %b2 eps %eps weight_decay %wd on_host : memref<8xf32>, memref<8xf32>, memref<f32>
  zrt.copy_to_device %hp to %p : memref<8xf32>
  return
}
