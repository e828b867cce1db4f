//===- Pipelines.h - the ZeRO stage pipelines and their options -*- C++ -*-===//
//
// What zero-opt chooses from: the options of a stage (StageOptions, the
// flags of zero-opt and of `zero-stage-pipeline{...}`), parsed and checked
// in one place, and the pipeline they build. The passes themselves are in
// passes/ by layer; none builds a pipeline of its own: what needs a trial
// compile (the accumulation under a memory limit, the report's program
// without recomputation) the planner (Planner.h) decides and hands to the
// passes as options.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_LIB_PIPELINES_PIPELINES_H
#define ZERO_LIB_PIPELINES_PIPELINES_H

#include "passes/Analysis/Passes.h"
#include "passes/Conversion/ZeroToZrt/Passes.h"
#include "passes/Conversion/ZrtToCalls/Passes.h"
#include "passes/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>
#include <vector>

namespace zero {

/// Every option of the stage pipeline, declared once: the registered
/// pipeline `zero-stage-pipeline{...}` parses it, and zero-opt offers each
/// option as a flag of the same name and help (`--stage=3 --world-size=4
/// ...`), builds the pipeline's text from the flags given, and runs that
/// text, which `--print-pipeline` prints; so `--pass-pipeline=` with it runs
/// exactly what `--stage` does.
struct StageOptions : public mlir::PassPipelineOptions<StageOptions> {
  Option<int64_t> stage{
      *this, "stage",
      llvm::cl::desc("Run the whole pipeline of ZeRO stage N (0-3), from "
                     "@forward to the LLVM dialect"),
      llvm::cl::value_desc("N"), llvm::cl::init(0)};
  Option<int64_t> worldSize{
      *this, "world-size",
      llvm::cl::desc("Number of data-parallel ranks (mpirun -np); required "
                     "for stages 1-3, 1 by default at stage 0"),
      llvm::cl::value_desc("N"), llvm::cl::init(1)};
  Option<int64_t> shardGroupSize{
      *this, "shard-group-size",
      llvm::cl::desc("Hybrid sharding (HSDP): shard the stage's state within "
                     "groups of G consecutive ranks and replicate it across "
                     "the N/G groups; gathers and reduce-scatters stay in a "
                     "group and gradients are all-reduced across groups. G "
                     "divides --world-size; 0 (default) or N shards over "
                     "all N ranks"),
      llvm::cl::value_desc("G"), llvm::cl::init(0)};
  Option<int64_t> gradAccum{
      *this, "grad-accum",
      llvm::cl::desc("Micro-batches of --batch accumulated (in float32) per "
                     "optimizer step"),
      llvm::cl::value_desc("K"), llvm::cl::init(1)};
  Option<std::string> accumulate{
      *this, "accumulate",
      llvm::cl::desc("With --grad-accum: local (each rank accumulates its "
                     "own gradient in a whole float32 buffer; one reduction "
                     "per optimizer step), sharded (gradients reduced every "
                     "micro-batch, accumulated as placed), or auto (default: "
                     "local at stages 0-1, sharded at 2-3; under "
                     "--memory-limit, local wherever it fits)"),
      llvm::cl::value_desc("auto|local|sharded"), llvm::cl::init("auto")};
  Option<std::string> reduceDtype{
      *this, "reduce-dtype",
      llvm::cl::desc("Element type bfloat16 gradients are reduced in: bf16 "
                     "(default) or fp32 (twice the bytes, no bf16 rounding "
                     "of the sums); float32 gradients are always reduced in "
                     "fp32"),
      llvm::cl::value_desc("bf16|fp32"), llvm::cl::init("bf16")};
  Option<bool> deterministic{
      *this, "deterministic",
      llvm::cl::desc("Exact sums: every gradient, loss and norm is added "
                     "across ranks and micro-batches in 128-bit fixed point "
                     "(order-independent), so runs whose ranks compute the "
                     "same chunk (--batch / --world-size rows per "
                     "micro-batch) give bitwise identical losses and weights "
                     "at every world size and stage; float32 only, local "
                     "accumulation, CPU backend"),
      llvm::cl::init(false)};
  Option<std::string> offload{
      *this, "offload",
      llvm::cl::desc("ZeRO-Offload: optimizer keeps the float32 moments and "
                     "master weights in host memory and runs AdamW on the "
                     "host (each step copies the gradient shard down and "
                     "the new parameter shard up); none (default) keeps "
                     "everything in device memory"),
      llvm::cl::value_desc("none|optimizer"), llvm::cl::init("none")};
  Option<int64_t> prefetch{
      *this, "prefetch",
      llvm::cl::desc("Overlap: all-gathers started ahead of their turn "
                     "(default 1); -1 keeps every collective blocking (no "
                     "overlap)"),
      llvm::cl::value_desc("N"), llvm::cl::init(1)};
  Option<int64_t> maxLiveGatherBytes{
      *this, "max-live-gather-bytes",
      llvm::cl::desc("Overlap: cap on the bytes of prefetched gathered "
                     "parameters in flight (0: no cap)"),
      llvm::cl::value_desc("bytes"), llvm::cl::init(0)};
  Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("Bucketing: reduce gradients in buckets of this many "
                     "bytes and gather each unit's (transformer block's) "
                     "parameters with one collective (0, the default: one "
                     "collective per tensor; 26214400 = 25 MiB is PyTorch "
                     "DDP's bucket)"),
      llvm::cl::value_desc("bytes"), llvm::cl::init(0)};
  ListOption<std::string> keepGatheredUnits{
      *this, "keep-gathered",
      llvm::cl::desc("Stage 3: keep these units' parameters gathered from "
                     "forward to backward (no reshard after forward); 'all' "
                     "for every unit, else names like h.0,h.11"),
      llvm::cl::value_desc("all|unit,...")};
  ListOption<std::string> recompute{
      *this, "recompute",
      llvm::cl::desc("Activation recomputation: keep only each chosen "
                     "unit's input from forward to backward and run its "
                     "forward again inside the backward (bit-identical "
                     "results); none (default), blocks (every transformer "
                     "block), or names like h.0,h.5"),
      llvm::cl::value_desc("none|blocks|unit,...")};
  Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Fuse each linear layer's bias (and a following GELU) "
                     "into its GEMM: one cuBLASLt call with a bias/GELU "
                     "epilogue on the GPU, the same kernels in sequence on "
                     "the CPU (default true)"),
      llvm::cl::init(true)};
  Option<std::string> memoryLimit{
      *this, "memory-limit",
      llvm::cl::desc("Refuse, before anything runs, a configuration whose "
                     "predicted peak memory per rank is over this many bytes "
                     "(80GiB, 40GB, 1.5e9, ...), naming its largest category "
                     "and the stage and world size that would fit"),
      llvm::cl::value_desc("bytes")};
  Option<std::string> hostMemoryLimit{
      *this, "host-memory-limit",
      llvm::cl::desc("Refuse a configuration whose predicted host memory "
                     "per rank (--offload=optimizer's moments, masters and "
                     "staging) is over this many bytes; --plan searches "
                     "under it"),
      llvm::cl::value_desc("bytes")};
  // The time model of zero-predict-schedule and zero-report
  // (Analysis/Passes.td's TimeModelOptions, under the same names; the
  // defaults are TimeModelOptions').
  Option<double> computeRate{
      *this, "compute-rate",
      llvm::cl::desc("Time model: GEMM GFLOP/s of one rank (default 100)"),
      llvm::cl::value_desc("GFLOP/s"),
      llvm::cl::init(TimeModelOptions().computeRate)};
  Option<double> memoryBandwidth{
      *this, "memory-bandwidth",
      llvm::cl::desc("Time model: GB/s one rank streams through memory "
                     "(default 12)"),
      llvm::cl::value_desc("GB/s"),
      llvm::cl::init(TimeModelOptions().memoryBandwidth)};
  Option<double> linkBandwidth{
      *this, "link-bandwidth",
      llvm::cl::desc("Time model: GB/s a rank sends to the next in a "
                     "collective (default 5)"),
      llvm::cl::value_desc("GB/s"),
      llvm::cl::init(TimeModelOptions().linkBandwidth)};
  Option<double> linkLatency{
      *this, "link-latency",
      llvm::cl::desc("Time model: microseconds of latency per step of a "
                     "collective (default 20)"),
      llvm::cl::value_desc("us"),
      llvm::cl::init(TimeModelOptions().linkLatency)};
  Option<std::string> calibration{
      *this, "calibration",
      llvm::cl::desc("Time model: a JSON file the runtime's --calibrate "
                     "wrote on the machine that will train (its numbers "
                     "replace the four above)"),
      llvm::cl::value_desc("file")};
  Option<int64_t> ranksPerNode{
      *this, "ranks-per-node",
      llvm::cl::desc("Time model: consecutive ranks that share the link "
                     "(a node); a collective whose group spans nodes runs at "
                     "the inter-node link (default 0: one link for all)"),
      llvm::cl::value_desc("N"),
      llvm::cl::init(TimeModelOptions().ranksPerNode)};
  Option<double> interNodeBandwidth{
      *this, "inter-node-bandwidth",
      llvm::cl::desc("Time model: GB/s a rank sends to a rank of another "
                     "node (default 0: --link-bandwidth)"),
      llvm::cl::value_desc("GB/s"),
      llvm::cl::init(TimeModelOptions().interNodeBandwidth)};
  Option<double> interNodeLatency{
      *this, "inter-node-latency",
      llvm::cl::desc("Time model: microseconds per step of a collective "
                     "across nodes (default 0: --link-latency)"),
      llvm::cl::value_desc("us"),
      llvm::cl::init(TimeModelOptions().interNodeLatency)};
  Option<double> hostMemoryBandwidth{
      *this, "host-memory-bandwidth",
      llvm::cl::desc("Time model: GB/s the host streams for one rank's "
                     "offloaded AdamW and cast (default 0: "
                     "--memory-bandwidth, as on the CPU backend)"),
      llvm::cl::value_desc("GB/s"),
      llvm::cl::init(TimeModelOptions().hostMemoryBandwidth)};
  Option<double> hostLinkBandwidth{
      *this, "host-link-bandwidth",
      llvm::cl::desc("Time model: GB/s of one rank's offload copies between "
                     "device and host memory, such as PCIe (default 0: a "
                     "memcpy at --memory-bandwidth, as on the CPU backend)"),
      llvm::cl::value_desc("GB/s"),
      llvm::cl::init(TimeModelOptions().hostLinkBandwidth)};
  Option<bool> stopAtZrt{
      *this, "stop-at-zrt",
      llvm::cl::desc("Stop at the planned zrt program (what zero-report "
                     "reads) instead of going on to the LLVM dialect"),
      llvm::cl::init(false)};

  /// Whether --shard-group-size asks for groups smaller than the world.
  bool hybridSharding() const {
    return shardGroupSize != 0 && shardGroupSize != worldSize;
  }

  /// Checks the values together. Returns the first problem, worded for
  /// zero-opt's flags of the same names, or "" when they are fine.
  std::string check() const;

  /// Whether `accumulate=auto` waits for the planner's decision: under a
  /// memory limit only a compile with local accumulation can say whether it
  /// fits (decideAccumulation in Planner.h).
  bool accumulationUndecided() const {
    return accumulate == "auto" && gradAccum > 1 && !deterministic &&
           !memoryLimit.empty();
  }

  /// The time model's options.
  TimeModelOptions timeModel() const { return TimeModelOptions::of(*this); }

  /// Calls `fn` with every option (zero-opt offers each as a flag).
  void
  forEachOption(llvm::function_ref<void(const llvm::cl::Option &)> fn) const {
    for (const auto &entry : OptionsMap)
      fn(*entry.second);
  }
};

/// Parses `text` (`stage=3 world-size=4 ...`, as `zero-stage-pipeline{...}`
/// takes it) into `options` and checks it: the one place stage options are
/// read from text. Fails when the text does not parse (MLIR's option parser
/// has said why); else returns the check's problem, "" when they are fine.
mlir::FailureOr<std::string> parseStageOptions(llvm::StringRef text,
                                               StageOptions &options);

/// The options as `name=value ...` text that parseStageOptions reads back.
std::string stageOptionsText(const StageOptions &options);

/// Adds the pipeline of one ZeRO stage, from @forward to the LLVM dialect.
/// `accumulate=auto` under a memory limit should have been decided by the
/// planner (decideAccumulation) first; else it takes the stage's choice.
void buildStagePipeline(mlir::OpPassManager &pm, const StageOptions &options);

/// Registers every zero-opt pass, the upstream passes the pipeline uses,
/// and the named pipeline `zero-stage-pipeline{...}` (StageOptions).
void registerAllZeroPasses();

} // namespace zero

#endif // ZERO_LIB_PIPELINES_PIPELINES_H
