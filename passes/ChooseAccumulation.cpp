//===- ChooseAccumulation.cpp - local accumulation where it fits ----------===//
//
// --accumulate=auto under --memory-limit. Local accumulation always moves
// less (one gradient reduction per step instead of K), so the only question
// is memory, and the exact answer is the planned program's peak: a copy of
// the module is compiled the rest of the way with local accumulation and
// replayed as zero-report does. Estimating the accumulators' bytes instead
// would misjudge configurations near the limit, where the choice matters.
//
//===----------------------------------------------------------------------===//
#include "passes/MemoryPrediction.h"
#include "passes/PassUtils.h"
#include "passes/Passes.h"

namespace zero {
#define GEN_PASS_DEF_CHOOSEACCUMULATION
#include "passes/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {
struct ChooseAccumulationPass
    : zero::impl::ChooseAccumulationBase<ChooseAccumulationPass> {
  using ChooseAccumulationBase::ChooseAccumulationBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<int64_t> bytes = parseLimitOption(module, getArgument(), limit);
    if (failed(bytes))
      return signalPassFailure();
    StageOptions trial;
    if (failed(trial.parseFromString(stageOptions)) || !trial.check().empty())
      return fail("options '" + stageOptions +
                  "' are not the stage pipeline's options");
    std::optional<int64_t> peak = peakWithLocalAccumulation(module, trial);
    bool fits = peak && *peak <= *bytes;
    module->setAttr("zero.accumulate",
                    StringAttr::get(&getContext(), fits ? "local" : "sharded"));
  }

  /// A pipeline run inside a pass may create ops only of dialects loaded
  /// before the outer pipeline started: those of the trial's passes.
  void getDependentDialects(DialectRegistry &registry) const override {
    StageOptions trial;
    trial.stopAtZrt = true;
    OpPassManager pm(ModuleOp::getOperationName());
    buildProgramPipeline(pm, trial, "local");
    pm.getDependentDialects(registry);
  }

  void fail(const std::string &problem) {
    getOperation().emitError() << getArgument() << ": " << problem;
    signalPassFailure();
  }

  /// The predicted peak per rank of the module compiled on with local
  /// accumulation, or nullopt when that does not compile (the real
  /// pipeline then reports why, once).
  std::optional<int64_t> peakWithLocalAccumulation(ModuleOp module,
                                                   StageOptions &trial) {
    trial.memoryLimit = "";
    trial.stopAtZrt = true;
    OpPassManager pm(ModuleOp::getOperationName());
    buildProgramPipeline(pm, trial, "local");
    std::optional<RankPrediction> prediction = predictCompiledCopy(
        module, pm, getArgument(),
        [&](OpPassManager &pipeline, ModuleOp copy) {
          return runPipeline(pipeline, copy);
        });
    if (!prediction)
      return std::nullopt;
    return prediction->ledger.peakTotal;
  }
};
} // namespace
