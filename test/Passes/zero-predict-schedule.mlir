// RUN: zero-opt %s --zero-predict-schedule="compute-rate=1 memory-bandwidth=1000 link-bandwidth=1 link-latency=10" | FileCheck %s
// RUN: zero-opt %s --zero-report="compute-rate=1 memory-bandwidth=1000 link-bandwidth=1 link-latency=10" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: zero-opt %s --zero-report="format=json compute-rate=1 memory-bandwidth=1000 link-bandwidth=1 link-latency=10" -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: zero-opt %s --zero-predict-schedule="calibration=%S/Inputs/calibration-polling.json" | FileCheck %s --check-prefix=POLLING
// RUN: zero-opt %s --zero-report="calibration=%S/Inputs/calibration-polling.json" -o /dev/null | FileCheck %s --check-prefix=POLLING-REPORT
// Running it twice replaces the plan instead of adding a second one.
// RUN: zero-opt %s --zero-predict-schedule --zero-predict-schedule="link-latency=10 link-bandwidth=1 compute-rate=1 memory-bandwidth=1000" | FileCheck %s

// Two ranks, two micro-batches a step. The time model: 1 GFLOP/s, so the
// 100x100x100 product takes 2 ms; a ring step of 10 us plus 1 GB/s on the
// link: the 4000-byte gather moves half its bytes in one step (12 us), an
// all-reduce of 4 bytes is two passes (2 x 10.002 us).
//   1: started before the product, waited after it: hidden (exposed 0).
//   2, 3: two all-reduces started together; the second queues behind the
//      first on the communication thread, so both waits block.
//   4: a blocking gather blocks its whole transfer.
// The second micro-batch repeats them as collectives 5-8.
// CHECK-LABEL: func.func @zero_program_describe
// CHECK: zrt.declare_micro_batches 2
// CHECK-NEXT: zrt.declare_collective_plan 1 queued 0 transfer 12000 exposed 0
// CHECK-NEXT: zrt.declare_collective_plan 2 queued 0 transfer 20004 exposed 20004
// CHECK-NEXT: zrt.declare_collective_plan 3 queued 20004 transfer 20004 exposed 20004
// CHECK-NEXT: zrt.declare_collective_plan 4 queued 0 transfer 12000 exposed 12000
// CHECK-NEXT: zrt.declare_collective_plan 5 queued 0 transfer 12000 exposed 0
// CHECK-NEXT: zrt.declare_collective_plan 6 queued 0 transfer 20004 exposed 20004
// CHECK-NEXT: zrt.declare_collective_plan 7 queued 20004 transfer 20004 exposed 20004
// CHECK-NEXT: zrt.declare_collective_plan 8 queued 0 transfer 12000 exposed 12000
// CHECK-NEXT: return

// The same numbers from a --calibrate file whose comm_overlap is -0.5 (a
// communication thread that polls on the kernels' core, as on a CPU with a
// core a rank): each asynchronous collective costs the compute thread 1.5x
// its transfer when it starts (18 us for a gather, 30.006 us for an
// all-reduce; 156.02 us a step), so the second all-reduce no longer queues
// and no wait blocks but the blocking gather's. The file also gives 1 us a
// collective start and 5 us a kernel outside it: 4 starts and 1 kernel a
// micro-batch, 18 us a step.
// POLLING-LABEL: func.func @zero_program_describe
// POLLING: zrt.declare_collective_plan 1 queued 0 transfer 12000 exposed 0
// POLLING-NEXT: zrt.declare_collective_plan 2 queued 0 transfer 20004 exposed 0
// POLLING-NEXT: zrt.declare_collective_plan 3 queued 0 transfer 20004 exposed 0
// POLLING-NEXT: zrt.declare_collective_plan 4 queued 0 transfer 12000 exposed 12000
// POLLING-REPORT: predicted schedule of one step (1.0 GFLOP/s, memory 1000.0 GB/s, link 1.00 GB/s and 10.0 us a step, collectives -50% overlapped, 1.0 us a collective start, 5.0 us a kernel outside it; --check-schedule holds the run to it):
// POLLING-REPORT-NEXT: step 4.20 ms: kernels 4.00 ms, waits blocking them 24.0 us, collectives on the compute core 156.0 us, starts and overhead 18.0 us

// Each collective with its op positions in the step and the kernels around.
// REPORT: predicted schedule of one step (1.0 GFLOP/s, memory 1000.0 GB/s, link 1.00 GB/s and 10.0 us a step; --check-schedule holds the run to it):
// REPORT-NEXT: step 4.10 ms: kernels 4.00 ms, waits blocking them 104.0 us
// REPORT-NEXT: #  collective       bytes kernels  hidden by     queued   transfer    exposed  where (op positions), what
// REPORT-NEXT: 1  all_gather        4000       1    2.00 ms          0    12.0 us          0  step#1 @0..@2, after (entry), before (exit), w
// REPORT-NEXT: 2  all_reduce           4       0          0          0    20.0 us    20.0 us  step#1 @3..@5, after matmul, before (exit), loss
// REPORT-NEXT: 3  all_reduce           4       0          0    20.0 us    20.0 us    20.0 us  step#1 @4..@6, after matmul, before (exit), gradient norm
// REPORT-NEXT: 4  all_gather        4000       0          0          0    12.0 us    12.0 us  step#1 @7 blocking, after matmul, before (exit), w
// REPORT-NEXT: 5  all_gather        4000       1    2.00 ms          0    12.0 us          0  step#2 @0..@2

// JSON: "schedule": {
// JSON: "collectives": [
// JSON: "blocking": false,
// JSON: "bytes": 4000,
// JSON: "compute_between_seconds": 0.002
// JSON: "exposed_seconds": 0,
// JSON: "function": "step",
// JSON: "kernel_after_wait": "(exit)",
// JSON: "kernel_before_start": "(entry)",
// JSON: "kernels_between": 1,
// JSON: "kind": "all_gather",
// JSON: "label": "w",
// JSON: "micro_batch": 1,
// JSON: "queued_seconds": 0,
// JSON: "sequence": 1,
// JSON: "start_position": 0,
// JSON: "transfer_seconds": 1.1999{{[0-9]+}}e-05,
// JSON: "wait_position": 2
// JSON: "time_model": {
// JSON-NEXT: "collective_start_seconds": 0,
// JSON-NEXT: "comm_overlap": 1,
// JSON-NEXT: "gemm_flops": 1000000000,
// JSON-NEXT: "host_link_bandwidth": 0,
// JSON-NEXT: "host_memory_bandwidth": 0,
// JSON-NEXT: "inter_node_bandwidth": 1000000000,
// JSON-NEXT: "inter_node_latency": {{1.0*1e-05|9.9+[0-9]*e-06}},
// JSON-NEXT: "kernel_overhead_seconds": 0,
// JSON-NEXT: "link_bandwidth": 1000000000,
// JSON-NEXT: "link_latency": {{1.0*1e-05|9.9+[0-9]*e-06}},
// JSON-NEXT: "memory_bandwidth": 1000000000000,
// JSON-NEXT: "ranks_per_node": 0

module {
  func.func @zero_program_describe() {
    zrt.declare_program world_size 2 stage 3 task classify batch 4 x 1 features 3 classes 5
    zrt.declare_micro_batches 2
    return
  }
  func.func @zero_program_step(%shard: memref<500xf32>, %whole: memref<1000xf32>,
                               %a: memref<100x100xf32>, %b: memref<100x100xf32>,
                               %c: memref<100x100xf32>, %loss: memref<f32>,
                               %norm: memref<f32>) {
    %g = zrt.all_gather_start %shard -> %whole of "w" : memref<500xf32> -> memref<1000xf32>
    zrt.matmul %a, %b -> %c : memref<100x100xf32>, memref<100x100xf32> -> memref<100x100xf32>
    zrt.wait %g
    %l = zrt.all_reduce_start %loss -> %loss of "loss" : memref<f32> -> memref<f32>
    %n = zrt.all_reduce_start %norm -> %norm of "gradient norm" : memref<f32> -> memref<f32>
    zrt.wait %l
    zrt.wait %n
    zrt.all_gather %shard -> %whole of "w" : memref<500xf32> -> memref<1000xf32>
    return
  }
}
