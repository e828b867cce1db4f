//===- Pipelines.cpp - the ZeRO stage pipelines, built in one place -------===//
#include "passes/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace zero {

void buildStagePipeline(OpPassManager &pm, const StageOptions &options) {
  pm.addPass(createSplitBatch({options.worldSize, options.microBatches}));
  pm.addPass(createAutodiff());
  pm.addPass(createAdamW());
  if (options.fuseEpilogues)
    pm.addPass(createFuseEpilogues());
  pm.addPass(createPlacement({options.stage, options.worldSize}));
  pm.addPass(createInsertCollectives());
  const auto &keepUnits = options.keepGatheredUnits;
  if (!keepUnits.empty()) {
    KeepGatheredOptions keep;
    if (!(keepUnits.size() == 1 && keepUnits.front() == "all"))
      keep.units.assign(keepUnits.begin(), keepUnits.end());
    pm.addPass(createKeepGathered(keep));
  }
  pm.addPass(createClipGradNorm());
  pm.addPass(createAccumulateGradients({options.microBatches}));
  if (options.bucketBytes > 0)
    pm.addPass(createBucketCollectives({options.bucketBytes,
                                        /*gatherUnits=*/true}));
  if (options.prefetch >= 0)
    pm.addPass(createScheduleOverlap({options.prefetch, options.maxLiveGatherBytes,
                                      /*maxInflightReductions=*/1}));
  pm.addPass(createLowerToRuntime());
  pm.addPass(createPlanMemory());
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
  registerZeroPasses(); // The passes of Passes.td.
  registerPass([] { return createConvertFuncToLLVMPass(); });
  registerPass([] { return createArithToLLVMConversionPass(); });
  registerPass([] { return createReconcileUnrealizedCastsPass(); });
  registerPass([] { return createCanonicalizerPass(); });
  registerPass([] { return createCSEPass(); });
  PassPipelineRegistration<StageOptions>(
      "zero-stage-pipeline",
      "The whole zero-opt pipeline for one ZeRO stage, from @forward to the "
      "LLVM dialect (what zero-opt --stage=N runs)",
      buildStagePipeline);
}

} // namespace zero
