//===- CheckMemoryLimit.cpp - refuse a program that cannot fit ------------===//
//
// The predicted peak (MemoryPrediction.h) equals what the runtime's ledger
// measures, so a configuration over the memory of its device can be refused
// at compile time, before a job waits in a queue to run out of memory at its
// first step.
//
//===----------------------------------------------------------------------===//
#include "passes/Analysis/MemoryPrediction.h"
#include "passes/Analysis/Passes.h"

namespace zero {
#define GEN_PASS_DEF_CHECKMEMORYLIMIT
#include "passes/Analysis/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {
struct CheckMemoryLimitPass
    : zero::impl::CheckMemoryLimitBase<CheckMemoryLimitPass> {
  using CheckMemoryLimitBase::CheckMemoryLimitBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The limits first: a misspelt one is the error to give. With neither,
    // the device's empty one is.
    std::optional<int64_t> device, host;
    if (!limit.empty() || hostLimit.empty()) {
      FailureOr<int64_t> bytes = parseLimitOption(module, getArgument(), limit);
      if (failed(bytes))
        return signalPassFailure();
      device = *bytes;
    }
    if (!hostLimit.empty()) {
      host = parseByteSize(hostLimit);
      if (!host) {
        module.emitError() << getArgument() << ": host-limit='" << hostLimit
                           << "' is not a byte count (like 512GiB, 1.5e11)";
        return signalPassFailure();
      }
    }
    FailureOr<RankPrediction> prediction = predictRank(module, getArgument());
    if (failed(prediction))
      return signalPassFailure();
    if (device && failed(checkDevice(*prediction, *device)))
      return signalPassFailure();
    if (host && failed(checkHost(*prediction, *host)))
      return signalPassFailure();
  }

  /// The device's peak, every device category together, against `limit`.
  LogicalResult checkDevice(const RankPrediction &prediction, int64_t bytes) {
    const MemoryLedger &ledger = prediction.ledger;
    if (ledger.peakTotal <= bytes)
      return success();
    int32_t largest = ledger.largestCategory();
    // Named by the limit: the module's location would print the module's
    // first line, which for a built model is the whole of its attributes.
    InFlightDiagnostic diag = emitError(FileLineColLoc::get(
        &getContext(), "memory-limit=" + limit.getValue(), 0, 0));
    diag << "predicted peak memory per rank is " << ledger.peakTotal
         << " bytes, over the memory limit of " << bytes << " bytes by "
         << ledger.peakTotal - bytes << "; the largest category is "
         << kMemoryCategoryNames[largest] << " (" << ledger.peak[largest]
         << " bytes; peaks:";
    for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
      if (!zrt_mem_category_is_host(c))
        diag << " " << kMemoryCategoryNames[c] << " " << ledger.peak[c];
    diag << ") at ZeRO stage " << prediction.facts.stage << " on "
         << prediction.facts.worldSize << " rank(s)";
    return failure();
  }

  /// The host categories' peak (--offload=optimizer) against `hostLimit`.
  LogicalResult checkHost(const RankPrediction &prediction, int64_t bytes) {
    const MemoryLedger &ledger = prediction.ledger;
    if (ledger.peakHost <= bytes)
      return success();
    InFlightDiagnostic diag = emitError(FileLineColLoc::get(
        &getContext(), "host-memory-limit=" + hostLimit.getValue(), 0, 0));
    diag << "predicted peak host memory per rank is " << ledger.peakHost
         << " bytes, over the host memory limit of " << bytes << " bytes by "
         << ledger.peakHost - bytes << " (peaks:";
    for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
      if (zrt_mem_category_is_host(c))
        diag << " " << kMemoryCategoryNames[c] << " " << ledger.peak[c];
    diag << ") at ZeRO stage " << prediction.facts.stage << " on "
         << prediction.facts.worldSize << " rank(s)";
    return failure();
  }
};
} // namespace
