// RUN: zero-opt %s --zero-report="compute-rate=1 memory-bandwidth=1 link-bandwidth=1 link-latency=10" -o /dev/null | FileCheck %s
// RUN: zero-opt %s --zero-report="format=json compute-rate=1 memory-bandwidth=1 link-bandwidth=1 link-latency=10" -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: zero-opt %s --zero-report="calibration=%S/Inputs/calibration-shared-core.json" -o /dev/null | FileCheck %s --check-prefix=SHARED
// RUN: zero-opt %s --zero-report="compute-rate=1 memory-bandwidth=1 link-bandwidth=1 link-latency=10 host-memory-bandwidth=0.5 host-link-bandwidth=4" -o /dev/null | FileCheck %s --check-prefix=HOST
// RUN: zero-opt %s --zero-report="format=json compute-rate=1 memory-bandwidth=1 link-bandwidth=1 link-latency=10 host-memory-bandwidth=0.5 host-link-bandwidth=4" -o /dev/null | FileCheck %s --check-prefix=HOST-JSON
// RUN: not zero-opt %s --zero-report="host-link-bandwidth=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// The host tasks of zero-overlap-offload on the schedule's third clock.
// The time model: 1 GFLOP/s (each 100x100x100 product 2 ms) and 1 GB/s of
// memory (1 ms a megabyte: each 250000-element buffer allocated 1 ms, each
// copy 2 ms, AdamW over its seven buffers and six scalars 7.000024 ms).
//
// The predicted step is the second: it starts with the first step's task
// (AdamW and the upload, 9 ms) still running on the host-task thread. The
// first product does not read %p and overlaps it; the wait for %p blocks
// the rest, 7 ms; then the second product, the two allocations and the two
// copies down (8 ms): 17 ms, against 19 ms with the update on the compute
// thread.
// CHECK: step 17.00 ms: kernels 10.00 ms, waits blocking them 0, host tasks 9.00 ms (waited for 7.00 ms)
// JSON: "host_shared_seconds": 0,
// JSON-NEXT: "host_task_seconds": 0.00900002{{[0-9]*}},
// JSON-NEXT: "host_wait_seconds": 0.00700002{{[0-9]*}},
// JSON: "step_seconds": 0.01700002{{[0-9]*}},

// Where the rank's second thread has no core of its own (comm_overlap 0,
// as measured on a CPU with one core a rank), the compute thread pays for
// the task as it queues it, and nothing is left to wait for: the 19 ms of
// the update run inline.
// SHARED: step 19.00 ms: kernels 10.00 ms, waits blocking them 0, collectives on the compute core 0, host tasks 9.00 ms (on the compute core 9.00 ms, waited for 0)

module {
  func.func @zero_program_describe() {
    zrt.declare_program world_size 1 stage 0 task classify batch 4 x 1 features 3 classes 5
    return
  }
  func.func @zero_program_step(%p: memref<250000xf32>, %grad: memref<250000xf32>,
                               %m: memref<250000xf32>, %v: memref<250000xf32>,
                               %a: memref<100x100xf32>, %b: memref<100x100xf32>,
                               %c: memref<100x100xf32>, %lr: memref<f32>,
                               %t: memref<f32>, %b1: memref<f32>,
                               %b2: memref<f32>, %eps: memref<f32>,
                               %wd: memref<f32>, %loss: memref<f32> {zrt.loss}) {
    zrt.matmul %a, %b -> %c : memref<100x100xf32>, memref<100x100xf32> -> memref<100x100xf32>
    zrt.host_wait %p : memref<250000xf32>
    zrt.matmul %a, %b -> %c : memref<100x100xf32>, memref<100x100xf32> -> memref<100x100xf32>
    zrt.host_wait_all
    %hp = zrt.alloc host_staging : memref<250000xf32>
    zrt.copy_to_host %p to %hp : memref<250000xf32>
    %hg = zrt.alloc host_staging : memref<250000xf32>
    zrt.copy_to_host %grad to %hg : memref<250000xf32>
    zrt.host_task_begin
    zrt.adamw %hp, %hg, %m, %v -> %hp, %m, %v lr %lr step %t beta1 %b1 beta2 %b2 eps %eps weight_decay %wd on_host : memref<250000xf32>, memref<250000xf32>, memref<f32>
    zrt.copy_to_device %hp to %p : memref<250000xf32>
    zrt.host_task_end writes %p : memref<250000xf32>
    zrt.free %hg : memref<250000xf32>
    zrt.free %hp : memref<250000xf32>
    return
  }
}

// A host slower than the device (0.5 GB/s: AdamW 14.000048 ms) behind a
// link of 4 GB/s (each copy's megabyte 0.25 ms, not a memcpy's 2 ms): the
// first step's task (AdamW and the upload, 14.25 ms) outlasts the product
// before the wait by 12.25 ms: 2 + 12.25 + 2 + 1 + 0.25 + 1 + 0.25 ms.
// HOST: predicted schedule of one step (1.0 GFLOP/s, memory 1.0 GB/s, link 1.00 GB/s and 10.0 us a step, host memory 0.5 GB/s, host link 4.0 GB/s;
// HOST-NEXT: step 18.75 ms: kernels 6.50 ms, waits blocking them 0, host tasks 14.25 ms (waited for 12.25 ms)
// HOST-JSON: "host_link_bandwidth": 4000000000,
// HOST-JSON-NEXT: "host_memory_bandwidth": 500000000,

// BAD: error: zero-report: host-memory-bandwidth and host-link-bandwidth must be zero or more
