//===- Planner.h - choose the configuration from the cost model -*- C++ -*-===//
//
// `zero-opt --plan` and `--stage=auto`. Every ZeRO system leaves the stage,
// the units kept gathered, the recomputed units, the prefetch distance and
// the bucket size to trial and error against out-of-memory errors. zero-opt
// predicts each rank's peak exactly (the runtime's ledger equals it) and
// each step's time with its time model, and a compile to the zrt program
// takes a fraction of a second, so it can try every combination before
// anything runs: the planner compiles each candidate, keeps those under the
// memory limit, and ranks them by predicted step time (then peak).
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_LIB_PIPELINES_PLANNER_H
#define ZERO_LIB_PIPELINES_PLANNER_H

#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zero {

/// One lever the planner turns: a StageOptions option and the values it
/// tries (a single value when the user gave the flag).
struct PlanAxis {
  std::string option;
  std::vector<std::string> values;
};

/// One configuration, compiled and predicted.
struct PlanCandidate {
  /// The searched options' values, in axis order (option, value).
  std::vector<std::pair<std::string, std::string>> choice;
  int64_t peakBytes = 0;
  /// Host memory (--offload=optimizer): the moments, masters and staging.
  int64_t hostPeakBytes = 0;
  /// The activations' own peak (what recomputation lowers).
  int64_t activationPeakBytes = 0;
  int64_t trafficBytes = 0;
  double stepSeconds = 0;
  bool fits = true;

  /// As zero-opt flags: `--stage=3 --prefetch=2 ...` (empty values, such as
  /// no units kept gathered, are left out).
  std::string flags() const;
};

struct PlanResult {
  /// Every candidate that compiled, fastest first (then smallest peak);
  /// those over the limit after those under it.
  std::vector<PlanCandidate> candidates;
  /// Candidates that did not compile (a stage a flag rules out, say).
  int64_t failed = 0;
  /// The chosen one: the first candidate, when it fits.
  const PlanCandidate *chosen() const {
    return !candidates.empty() && candidates.front().fits ? &candidates.front()
                                                          : nullptr;
  }
};

/// Compiles `input` with `options` (StageOptions text) to the zrt program,
/// without a memory limit, and predicts its peak, traffic and step time
/// (the options' time model) into `candidate`; false when it does not
/// compile (a world size that does not divide the batch, say).
bool predictConfiguration(llvm::StringRef input,
                          mlir::DialectRegistry &registry,
                          llvm::StringRef options, PlanCandidate &candidate);

/// The units of the model's parameters (the names up to their first
/// all-digit component), in the order @forward declares them, and which of
/// them are blocks (end in digits).
struct ModelUnits {
  std::vector<std::string> all, blocks;
};
std::optional<ModelUnits> readModelUnits(llvm::StringRef input,
                                         mlir::DialectRegistry &registry);

/// The levers for `units` at stages `stages` on `worldSize` ranks: the
/// shard group size (flat, and at stages 1-3 every size from 2 that divides
/// the world size), keep-gathered (stage 3: none,
/// every unit, the last half of the blocks), recompute (none, every block,
/// the first half), prefetch (-1, 1 and, at stage 3, 2), bucket-bytes (0
/// and PyTorch DDP's 25 MiB), with `microBatches` > 1 the accumulation
/// (local, sharded), and with `searchOffload` (a memory limit to fit) the
/// optimizer's offload to the host (none, optimizer: it only ever saves
/// memory, at the cost of the copies and a host update). `fixed` holds the
/// options the user gave, which are not searched.
std::vector<PlanAxis>
planAxes(const ModelUnits &units, const std::vector<int64_t> &stages,
         int64_t worldSize, int64_t microBatches, bool searchOffload,
         const std::vector<std::pair<std::string, std::string>> &fixed);

/// Compiles `input` to the zrt program with `baseOptions` (StageOptions
/// text without the searched options) and every combination of `axes`
/// (keep-gathered and prefetch 2 only at stage 3), and predicts each one's
/// peak, traffic and step time (the time model of `baseOptions`).
/// What a candidate must fit under: device memory per rank
/// (--memory-limit) and host memory per rank (--host-memory-limit).
struct PlanLimits {
  std::optional<int64_t> device, host;
  bool fits(const PlanCandidate &c) const {
    return (!device || c.peakBytes <= *device) &&
           (!host || c.hostPeakBytes <= *host);
  }
};

PlanResult searchPlans(llvm::StringRef input, mlir::DialectRegistry &registry,
                       llvm::StringRef baseOptions,
                       const std::vector<PlanAxis> &axes,
                       const PlanLimits &limits);

/// The table `--plan` prints: the ranked candidates under the limit (the
/// first `shown`), the best over it, and the choice.
void printPlan(llvm::raw_ostream &os, const PlanResult &result,
               llvm::StringRef header, const PlanLimits &limits,
               size_t shown = 10);

/// `--accumulate=auto` under `--memory-limit` (StageOptions::
/// accumulationUndecided): "local" when `input` compiled with `options` and
/// local accumulation fits the limit, else "sharded"; nullopt when the
/// options leave nothing to decide.
std::optional<std::string> decideAccumulation(llvm::StringRef input,
                                              mlir::DialectRegistry &registry,
                                              llvm::StringRef options);

/// `input` compiled with `options` but no recomputation, predicted (what
/// `--report` prints next to the recomputed program); nullopt when it does
/// not compile.
std::optional<PlanCandidate>
predictWithoutRecompute(llvm::StringRef input, mlir::DialectRegistry &registry,
                        llvm::StringRef options);

} // namespace zero

#endif // ZERO_LIB_PIPELINES_PLANNER_H
