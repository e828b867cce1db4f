//===- Analysis/Passes.td - the analyses of the zrt program *- tablegen -*-===//
//
// The analyses of the planned zrt program: its memory and schedule
// predictions, the report and the memory limit.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_ANALYSIS_PASSES
#define ZERO_ANALYSIS_PASSES

include "mlir/Pass/PassBase.td"

// The time model's options, shared by zero-predict-schedule and zero-report;
// their defaults are TimeModelOptions' (Analysis/SchedulePrediction.h).
defvar TimeModelOptions = [
  Option<"computeRate", "compute-rate", "double",
         "::zero::TimeModelOptions().computeRate",
         "GEMM GFLOP/s of one rank (the time model's compute)">,
  Option<"memoryBandwidth", "memory-bandwidth", "double",
         "::zero::TimeModelOptions().memoryBandwidth",
         "GB/s one rank streams through memory">,
  Option<"linkBandwidth", "link-bandwidth", "double",
         "::zero::TimeModelOptions().linkBandwidth",
         "GB/s a rank sends to the next one in a collective">,
  Option<"linkLatency", "link-latency", "double",
         "::zero::TimeModelOptions().linkLatency",
         "Microseconds of latency per step of a collective">,
  Option<"calibration", "calibration", "std::string", "\"\"",
         "A JSON file of the runtime's --calibrate (its four numbers "
         "replace the four above)">,
  Option<"ranksPerNode", "ranks-per-node", "int64_t",
         "::zero::TimeModelOptions().ranksPerNode",
         "Consecutive ranks that share the link above (a node); a "
         "collective whose group spans nodes runs at the inter-node link. "
         "0: every rank on the one link">,
  Option<"interNodeBandwidth", "inter-node-bandwidth", "double",
         "::zero::TimeModelOptions().interNodeBandwidth",
         "GB/s a rank sends to a rank of another node (0: link-bandwidth)">,
  Option<"interNodeLatency", "inter-node-latency", "double",
         "::zero::TimeModelOptions().interNodeLatency",
         "Microseconds per step of a collective across nodes (0: "
         "link-latency)">,
  Option<"hostMemoryBandwidth", "host-memory-bandwidth", "double",
         "::zero::TimeModelOptions().hostMemoryBandwidth",
         "GB/s the host streams for one rank's host kernels (the offloaded "
         "AdamW and cast; 0: memory-bandwidth, the CPU backend's case)">,
  Option<"hostLinkBandwidth", "host-link-bandwidth", "double",
         "::zero::TimeModelOptions().hostLinkBandwidth",
         "GB/s of one rank's copies between device and host memory (the "
         "offload's; 0: a memcpy, both buffers at memory-bandwidth)">,
];

def PredictSchedule : Pass<"zero-predict-schedule", "::mlir::ModuleOp"> {
  let summary = "Declares when each collective should start, run and block";
  let description = [{
    Input: the zrt program. Replays one optimizer step (every micro-batch,
    then the apply function) on two clocks, as libzrt runs it
    (passes/SchedulePrediction.h): the compute thread runs the kernels in
    order, each taking the longer of its FLOPs at `compute-rate` and its
    buffers' bytes at `memory-bandwidth`; the communication thread runs the
    collectives one at a time in start order, each taking a ring's
    `link-latency` per step plus its bytes on the wire at `link-bandwidth`.
    A collective begins when it is started or when the one before it ends;
    a wait blocks the compute clock until its collective ends. Output: one
    `zrt.declare_collective_plan` per collective in `@zero_program_describe`
    (replacing any from an earlier run), with the time it queues, its
    transfer and the time its wait blocks, which the runtime's
    `--check-schedule` compares with the run. `zero-report` prints the same
    prediction with each collective's position.

    ```mlir
    zrt.declare_collective_plan 1 queued 0 transfer 84000 exposed 84000
    ```
  }];
  let options = TimeModelOptions;
}

def Report : Pass<"zero-report", "::mlir::ModuleOp"> {
  let summary = "Predicts each rank's peak memory and traffic per step";
  let description = [{
    Input: the zrt program of `zero-lower-to-zrt`. Replays what the
    runtime will do: allocates every argument `zrt.declare_arg` declares,
    then walks the step (once per micro-batch) and the apply function,
    adding each `zrt.alloc` to its category and subtracting each `zrt.free`,
    and counting the bytes of every collective by the runtime's rule (zrt.h's
    `zrt_traffic_elements`, through the zrt collective interface; padded
    collectives stage a padded copy as comm memory while they run). Prints
    the peak bytes per memory category, the traffic per collective kind, and
    the ZeRO paper's formulas for the same model, as a table or as JSON.
    With `nn-recompute`'s record on the module it also prints the units
    recomputed and, when the planner compiled the program without
    recomputation (`zero-opt --report` does), that program's peaks
    (`baseline-activation-peak`, `baseline-peak`). The IR is not changed.
  }];
  let options = !listconcat([
    Option<"format", "format", "std::string", "\"table\"",
           "table or json">,
    Option<"baselineActivationPeak", "baseline-activation-peak", "int64_t",
           "-1", "The activation peak per rank of the same program without "
           "recomputation (-1: not compiled)">,
    Option<"baselinePeak", "baseline-peak", "int64_t", "-1",
           "The total peak per rank of the same program without "
           "recomputation (-1: not compiled)">,
  ], TimeModelOptions);
}

def CheckMemoryLimit : Pass<"zero-check-memory-limit", "::mlir::ModuleOp"> {
  let summary = "Refuses a program whose predicted peak memory per rank is "
                "over a limit";
  let description = [{
    Input: the zrt program (planned or not). Replays it as `zero-report`
    does (passes/MemoryPrediction.h: the peak the runtime's ledger will
    measure, every category together) and fails with an error naming the
    peak, the limit, and the largest category with every category's bytes,
    when the peak is over `limit`; so a configuration that cannot fit is
    refused before anything runs. The limit is bytes with an optional unit
    (`80GiB`, `40GB`, `512MiB`, `1.5e9`). The CUDA backend's workspace
    (`zero-report`'s "runtime workspace") comes on top of the categories and
    is not counted. `zero-opt --memory-limit=BYTES` adds this pass to the
    stage pipeline and, when it fails, names the stage and world size that
    would fit. With `host-limit` (`--host-memory-limit`) the host memory of
    `--offload=optimizer` (the moments, the masters and their staging,
    which the device's peak leaves out) is held to its own limit the same
    way. Either limit may be given alone. The IR is not changed.
  }];
  let options = [
    Option<"limit", "limit", "std::string", "\"\"",
           "The most bytes a rank may use (80GiB, 40GB, 1.5e9, ...)">,
    Option<"hostLimit", "host-limit", "std::string", "\"\"",
           "The most bytes of host memory a rank may use (the host "
           "categories of --offload=optimizer)">,
  ];
}

#endif // ZERO_ANALYSIS_PASSES
