//===- Pipelines.cpp - the ZeRO stage pipelines, built in one place -------===//
#include "lib/Pipelines/Pipelines.h"
#include "passes/Analysis/MemoryPrediction.h"
#include "passes/Analysis/SchedulePrediction.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace zero {

std::string StageOptions::check() const {
  std::string problem;
  llvm::raw_string_ostream os(problem);
  if (stage < 0 || stage > 3)
    os << "--stage=" << stage << " is not a ZeRO stage; use 0, 1, 2 or 3";
  else if (stage >= 1 && !worldSize.hasValue())
    os << "--stage=" << stage
       << " requires --world-size=N, the number of ranks the program will "
          "run on (mpirun -np N)";
  else if (worldSize < 1)
    os << "--world-size must be at least 1, got " << worldSize;
  else if (shardGroupSize != 0 &&
           (shardGroupSize < 2 || worldSize % shardGroupSize != 0))
    os << "--shard-group-size=" << shardGroupSize
       << " must divide --world-size=" << worldSize
       << " and be at least 2 (0 shards over every rank)";
  else if (hybridSharding() && stage == 0)
    os << "--shard-group-size shards the state of stages 1-3 within groups; "
          "--stage=0 shards nothing";
  else if (gradAccum < 1)
    os << "--grad-accum must be at least 1, got " << gradAccum;
  else if (prefetch < -1 || maxLiveGatherBytes < 0)
    os << "--prefetch must be -1 or more and --max-live-gather-bytes not "
          "negative";
  else if (bucketBytes < 0)
    os << "--bucket-bytes must not be negative, got " << bucketBytes;
  else if (!keepGatheredUnits.empty() && stage != 3)
    os << "--keep-gathered keeps stage 3's gathered parameters from forward "
          "to backward; at --stage="
       << stage << " parameters are never resharded";
  else if (llvm::is_contained(keepGatheredUnits, "all") &&
           keepGatheredUnits.size() > 1)
    os << "--keep-gathered=all already names every unit; do not list others";
  else if ((llvm::is_contained(recompute, "none") ||
            llvm::is_contained(recompute, "blocks")) &&
           recompute.size() > 1)
    os << "--recompute=none and --recompute=blocks stand alone; do not list "
          "units with them";
  else if (accumulate != "auto" && accumulate != "local" &&
           accumulate != "sharded")
    os << "--accumulate=" << accumulate
       << " is not a way to accumulate gradients; use local, sharded or auto";
  else if (accumulate != "auto" && gradAccum == 1)
    os << "--accumulate=" << accumulate
       << " chooses where --grad-accum=K micro-batches are reduced; it needs "
          "--grad-accum of 2 or more";
  else if (deterministic && accumulate == "sharded")
    os << "--deterministic adds each rank's own gradients exactly and "
          "reduces them once per step; it cannot take --accumulate=sharded";
  else if (offload != "none" && offload != "optimizer")
    os << "--offload=" << offload
       << " is not something to offload; use none or optimizer";
  else if (reduceDtype != "bf16" && reduceDtype != "fp32")
    os << "--reduce-dtype=" << reduceDtype
       << " is not a reduction type; use bf16 or fp32";
  else if (!(computeRate > 0) || !(memoryBandwidth > 0) || !(linkBandwidth > 0))
    os << "--compute-rate, --memory-bandwidth and --link-bandwidth must be "
          "positive (GFLOP/s, GB/s, GB/s)";
  else if (!(linkLatency >= 0))
    os << "--link-latency must be zero or more microseconds, got "
       << linkLatency;
  else if (ranksPerNode < 0 || !(interNodeBandwidth >= 0) ||
           !(interNodeLatency >= 0))
    os << "--ranks-per-node, --inter-node-bandwidth and --inter-node-latency "
          "must be zero or more (0: one level of links)";
  else if (!(hostMemoryBandwidth >= 0) || !(hostLinkBandwidth >= 0))
    os << "--host-memory-bandwidth and --host-link-bandwidth must be zero or "
          "more GB/s (0: the device's memory, as on the CPU backend)";
  else if (!calibration.empty()) {
    if (llvm::Expected<TimeModel> model = readCalibration(calibration); !model)
      os << llvm::toString(model.takeError());
  }
  if (!problem.empty())
    return problem;
  if (!memoryLimit.empty() && !parseByteSize(memoryLimit))
    os << "--memory-limit=" << memoryLimit
       << " is not a byte count; give bytes, with a unit if you like "
          "(80GiB, 40GB, 512MiB, 1.5e9)";
  else if (!hostMemoryLimit.empty() && !parseByteSize(hostMemoryLimit))
    os << "--host-memory-limit=" << hostMemoryLimit
       << " is not a byte count; give bytes, with a unit if you like "
          "(512GiB, 1.5e11)";
  return problem;
}

FailureOr<std::string> parseStageOptions(StringRef text,
                                         StageOptions &options) {
  if (failed(options.parseFromString(text)))
    return failure();
  return options.check();
}

std::string stageOptionsText(const StageOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  options.print(os);
  return StringRef(text).drop_front().drop_back().str(); // print's braces
}

/// `--accumulate=auto` without a memory limit: local where gradients are
/// whole anyway (stage 0) or only the optimizer state is sharded (stage 1),
/// sharded where the stage was chosen to shard gradient memory (2-3).
static StringRef staticAccumulation(const StageOptions &options) {
  return options.stage <= 1 ? "local" : "sharded";
}

void buildStagePipeline(OpPassManager &pm, const StageOptions &options) {
  pm.addPass(createSplitBatch({options.worldSize, options.gradAccum}));
  pm.addPass(createAutodiff());
  pm.addPass(createAdamW());
  if (options.fuseEpilogues)
    pm.addPass(createFuseEpilogues());
  const auto &recomputeUnits = options.recompute;
  if (!recomputeUnits.empty() &&
      !(recomputeUnits.size() == 1 && recomputeUnits.front() == "none")) {
    RecomputeOptions recompute;
    recompute.units.assign(recomputeUnits.begin(), recomputeUnits.end());
    pm.addPass(createRecompute(recompute));
  }
  pm.addPass(createPlacement(
      {options.stage, options.hybridSharding() ? options.shardGroupSize : 0}));
  pm.addPass(createInsertCollectives());
  const auto &keepUnits = options.keepGatheredUnits;
  if (!keepUnits.empty()) {
    KeepGatheredOptions keep;
    if (!(keepUnits.size() == 1 && keepUnits.front() == "all"))
      keep.units.assign(keepUnits.begin(), keepUnits.end());
    pm.addPass(createKeepGathered(keep));
  }
  pm.addPass(createClipGradNorm());
  StringRef accumulate = options.accumulate;
  if (options.deterministic) {
    // Exact sums need each rank's own gradients accumulated.
    accumulate = "local";
  } else if (accumulate == "auto") {
    // Under a memory limit the planner decides (decideAccumulation); a
    // pipeline built without it (a trial compile, which has no limit)
    // takes the stage's choice.
    accumulate = staticAccumulation(options);
  }
  pm.addPass(createAccumulateGradients({options.gradAccum, accumulate.str()}));
  if (options.reduceDtype == "fp32")
    pm.addPass(createFp32Reductions());
  if (options.deterministic)
    pm.addPass(createExactSums());
  if (options.offload == "optimizer")
    pm.addPass(createOffloadOptimizer());
  pm.addPass(createExtractEval());
  if (options.bucketBytes > 0)
    pm.addPass(createBucketCollectives({options.bucketBytes,
                                        /*gatherUnits=*/true}));
  if (options.prefetch >= 0)
    pm.addPass(
        createScheduleOverlap({options.prefetch, options.maxLiveGatherBytes,
                               /*maxInflightReductions=*/1}));
  pm.addPass(createLowerZeroToZrt());
  if (options.offload == "optimizer")
    pm.addPass(createOverlapOffload());
  pm.addPass(createPlanMemory());
  pm.addPass(createElideZeroFills());
  if (!options.memoryLimit.empty() || !options.hostMemoryLimit.empty())
    pm.addPass(
        createCheckMemoryLimit({options.memoryLimit, options.hostMemoryLimit}));
  PredictScheduleOptions schedule;
  pm.addPass(createPredictSchedule(options.timeModel().applyTo(schedule)));
  if (options.stopAtZrt)
    return;
  pm.addPass(createLowerZrtToCalls());
  // Hoists and merges the constants of the calls, so that the lowered
  // program reads as a list of calls.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void registerAllZeroPasses() {
  // The passes of each layer's Passes.td.
  registerTransformsPasses();
  registerZeroToZrtPasses();
  registerZrtToCallsPasses();
  registerAnalysisPasses();
  registerPass([] { return createConvertFuncToLLVMPass(); });
  registerPass([] { return createArithToLLVMConversionPass(); });
  registerPass([] { return createReconcileUnrealizedCastsPass(); });
  registerPass([] { return createCanonicalizerPass(); });
  registerPass([] { return createCSEPass(); });
  // As PassPipelineRegistration<StageOptions> does, plus StageOptions::check,
  // so that the pipeline refuses by name what zero-opt --stage refuses.
  registerPassPipeline(
      "zero-stage-pipeline",
      "The whole zero-opt pipeline for one ZeRO stage, from @forward to the "
      "LLVM dialect (what zero-opt --stage=N runs)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        StageOptions options;
        FailureOr<std::string> problem = parseStageOptions(text, options);
        if (failed(problem))
          return failure();
        if (!problem->empty())
          return errorHandler("zero-stage-pipeline: " + *problem);
        if (options.accumulationUndecided())
          return errorHandler(
              "zero-stage-pipeline: accumulate=auto under memory-limit is "
              "decided by zero-opt's planner (it compiles the program with "
              "local accumulation to see whether it fits); give "
              "accumulate=local or accumulate=sharded");
        buildStagePipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> printOptions) {
        printOptions(StageOptions());
      });
}

} // namespace zero
