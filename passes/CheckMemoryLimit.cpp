//===- CheckMemoryLimit.cpp - refuse a program that cannot fit ------------===//
//
// The predicted peak (MemoryPrediction.h) equals what the runtime's ledger
// measures, so a configuration over the memory of its device can be refused
// at compile time, before a job waits in a queue to run out of memory at its
// first step.
//
//===----------------------------------------------------------------------===//
#include "passes/MemoryPrediction.h"
#include "passes/Passes.h"

namespace zero {
#define GEN_PASS_DEF_CHECKMEMORYLIMIT
#include "passes/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {
struct CheckMemoryLimitPass
    : zero::impl::CheckMemoryLimitBase<CheckMemoryLimitPass> {
  using CheckMemoryLimitBase::CheckMemoryLimitBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<int64_t> bytes = parseLimitOption(module, getArgument(), limit);
    if (failed(bytes))
      return signalPassFailure();
    FailureOr<RankPrediction> prediction = predictRank(module, getArgument());
    if (failed(prediction))
      return signalPassFailure();
    const MemoryLedger &ledger = prediction->ledger;
    if (ledger.peakTotal <= *bytes)
      return;
    int32_t largest = ledger.largestCategory();
    // Named by the limit: the module's location would print the module's
    // first line, which for a built model is the whole of its attributes.
    InFlightDiagnostic diag = emitError(FileLineColLoc::get(
        &getContext(), "memory-limit=" + limit.getValue(), 0, 0));
    diag << "predicted peak memory per rank is " << ledger.peakTotal
         << " bytes, over the memory limit of " << *bytes << " bytes by "
         << ledger.peakTotal - *bytes << "; the largest category is "
         << kMemoryCategoryNames[largest] << " (" << ledger.peak[largest]
         << " bytes; peaks:";
    for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
      if (!zrt_mem_category_is_host(c))
        diag << " " << kMemoryCategoryNames[c] << " " << ledger.peak[c];
    diag << ") at ZeRO stage " << prediction->facts.stage << " on "
         << prediction->facts.worldSize << " rank(s)";
    signalPassFailure();
  }
};
} // namespace
