//===- Planner.cpp - choose the configuration from the cost model ---------===//
#include "lib/Pipelines/Planner.h"

#include "lib/Pipelines/Pipelines.h"
#include "passes/Analysis/MemoryPrediction.h"
#include "passes/Analysis/SchedulePrediction.h"
#include "passes/Utils/PassUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;

namespace zero {

namespace {
/// PyTorch DDP's bucket, the one bucket size the planner tries.
constexpr int64_t kDdpBucketBytes = 25 * 1024 * 1024;

std::string join(llvm::ArrayRef<std::string> names) {
  return llvm::join(names, ",");
}

/// The value of `option` in a candidate, or "".
llvm::StringRef
valueOf(const std::vector<std::pair<std::string, std::string>> &choice,
        llvm::StringRef option) {
  for (const auto &[name, value] : choice)
    if (name == option)
      return value;
  return "";
}

/// A choice no stage pipeline distinguishes from another, or one a stage
/// rules out: units kept gathered and prefetch distances over 1 matter at
/// stage 3 only (the other stages gather nothing before use).
bool isMeaningful(
    const std::vector<std::pair<std::string, std::string>> &choice) {
  bool stage3 = valueOf(choice, "stage") == "3";
  if (!stage3 && !valueOf(choice, "keep-gathered").empty())
    return false;
  // Stage 0 shards nothing, so it has no shard groups.
  StringRef group = valueOf(choice, "shard-group-size");
  if (valueOf(choice, "stage") == "0" && !group.empty() && group != "0")
    return false;
  int64_t prefetch = 1;
  if (!valueOf(choice, "prefetch").getAsInteger(10, prefetch) && prefetch > 1 &&
      !stage3)
    return false;
  return true;
}

/// StageOptions text of one choice.
std::string
optionsText(const std::vector<std::pair<std::string, std::string>> &choice) {
  std::string text;
  for (const auto &[name, value] : choice) {
    if (value.empty())
      continue;
    bool isList = name == "keep-gathered" || name == "recompute";
    text += " " + name + "=" + (isList ? "{" + value + "}" : value);
  }
  return text;
}

} // namespace

std::string PlanCandidate::flags() const {
  std::string text;
  for (const auto &[name, value] : choice) {
    if (value.empty())
      continue;
    text += (text.empty() ? "--" : " --") + name + "=" + value;
  }
  return text;
}

bool predictConfiguration(llvm::StringRef input, DialectRegistry &registry,
                          llvm::StringRef options, PlanCandidate &candidate) {
  StageOptions parsed;
  FailureOr<std::string> problem = parseStageOptions(options, parsed);
  if (failed(problem) || !problem->empty())
    return false;
  parsed.stopAtZrt = true;
  // The planner compares with the limits itself.
  parsed.memoryLimit = "";
  parsed.hostMemoryLimit = "";
  MLIRContext ctx(registry);
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(input, &ctx);
  if (!module)
    return false;
  PassManager pm(&ctx);
  buildStagePipeline(pm, parsed);
  if (failed(pm.run(*module)))
    return false;
  FailureOr<RankPrediction> rank = predictRank(*module, "zero-opt --plan");
  FailureOr<TimeModel> model =
      timeModelFromOptions(*module, "zero-opt --plan", parsed.timeModel());
  if (failed(rank) || failed(model))
    return false;
  FailureOr<SchedulePrediction> schedule =
      predictSchedule(*module, *model, "zero-opt --plan");
  if (failed(schedule))
    return false;
  candidate.peakBytes = rank->ledger.peakTotal;
  candidate.hostPeakBytes = rank->ledger.peakHost;
  candidate.activationPeakBytes = rank->ledger.peak[ZRT_MEM_ACTIVATION];
  candidate.trafficBytes = 0;
  for (int64_t bytes : rank->ledger.bytes)
    candidate.trafficBytes += bytes;
  candidate.stepSeconds = schedule->stepSeconds;
  return true;
}
std::optional<ModelUnits> readModelUnits(llvm::StringRef input,
                                         DialectRegistry &registry) {
  MLIRContext ctx(registry);
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(input, &ctx);
  if (!module)
    return std::nullopt;
  auto forward = module->lookupSymbol<func::FuncOp>(kForwardFuncName);
  if (!forward)
    return std::nullopt;
  ModelUnits units;
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
    llvm::StringRef name = getParamName(forward, i);
    if (name.empty())
      continue;
    std::string unit = getParamUnit(name).str();
    if (llvm::is_contained(units.all, unit))
      continue;
    units.all.push_back(unit);
    if (isBlockUnit(unit))
      units.blocks.push_back(unit);
  }
  return units;
}

std::vector<PlanAxis>
planAxes(const ModelUnits &units, const std::vector<int64_t> &stages,
         int64_t worldSize, int64_t microBatches, bool searchOffload,
         const std::vector<std::pair<std::string, std::string>> &fixed) {
  size_t half = units.blocks.size() / 2;
  std::vector<std::string> firstHalf(units.blocks.begin(),
                                     units.blocks.begin() + half);
  std::vector<std::string> lastHalf(units.blocks.begin() + half,
                                    units.blocks.end());
  std::vector<PlanAxis> axes;
  PlanAxis stage{"stage", {}};
  for (int64_t s : stages)
    stage.values.push_back(std::to_string(s));
  axes.push_back(stage);
  // Hybrid sharding: every group size that tiles the world ("": flat).
  PlanAxis groups{"shard-group-size", {""}};
  for (int64_t g = 2; g < worldSize; ++g)
    if (worldSize % g == 0)
      groups.values.push_back(std::to_string(g));
  axes.push_back(groups);
  PlanAxis keep{"keep-gathered", {"", "all"}};
  if (!lastHalf.empty() && !firstHalf.empty())
    keep.values.push_back(join(lastHalf));
  axes.push_back(keep);
  PlanAxis recompute{"recompute", {"none"}};
  if (!units.blocks.empty())
    recompute.values.push_back("blocks");
  if (!firstHalf.empty())
    recompute.values.push_back(join(firstHalf));
  axes.push_back(recompute);
  axes.push_back({"prefetch", {"-1", "1", "2"}});
  axes.push_back({"bucket-bytes", {"0", std::to_string(kDdpBucketBytes)}});
  if (microBatches > 1)
    axes.push_back({"accumulate", {"local", "sharded"}});
  // "": none, which is never slower, so offload is searched only to fit a
  // limit (given, it is kept as given like every fixed option).
  PlanAxis offload{"offload", {""}};
  if (searchOffload)
    offload.values.push_back("optimizer");
  axes.push_back(offload);
  for (PlanAxis &axis : axes)
    for (const auto &[name, value] : fixed)
      if (axis.option == name)
        axis.values = {value};
  return axes;
}

PlanResult searchPlans(llvm::StringRef input, DialectRegistry &registry,
                       llvm::StringRef baseOptions,
                       const std::vector<PlanAxis> &axes,
                       const PlanLimits &limits) {
  PlanResult result;
  std::vector<std::pair<std::string, std::string>> choice;
  std::function<void(size_t)> visit = [&](size_t axis) {
    if (axis == axes.size()) {
      if (!isMeaningful(choice))
        return;
      PlanCandidate candidate;
      candidate.choice = choice;
      if (!predictConfiguration(input, registry,
                                baseOptions.str() + optionsText(choice),
                                candidate)) {
        ++result.failed;
        return;
      }
      candidate.fits = limits.fits(candidate);
      result.candidates.push_back(std::move(candidate));
      return;
    }
    for (const std::string &value : axes[axis].values) {
      choice.emplace_back(axes[axis].option, value);
      visit(axis + 1);
      choice.pop_back();
    }
  };
  visit(0);
  std::stable_sort(result.candidates.begin(), result.candidates.end(),
                   [](const PlanCandidate &a, const PlanCandidate &b) {
                     if (a.fits != b.fits)
                       return a.fits;
                     if (a.stepSeconds != b.stepSeconds)
                       return a.stepSeconds < b.stepSeconds;
                     return a.peakBytes < b.peakBytes;
                   });
  return result;
}

/// " under N bytes a rank[ and H bytes of host memory]", or that there is
/// no limit.
static std::string describeLimits(const PlanLimits &limits) {
  if (!limits.device && !limits.host)
    return " (no --memory-limit)";
  std::string text = " under";
  if (limits.device)
    text += llvm::formatv(" {0} bytes a rank", *limits.device).str();
  if (limits.device && limits.host)
    text += " and";
  if (limits.host)
    text +=
        llvm::formatv(" {0} bytes of host memory a rank", *limits.host).str();
  return text;
}

void printPlan(llvm::raw_ostream &os, const PlanResult &result,
               llvm::StringRef header, const PlanLimits &limits, size_t shown) {
  size_t fitting = llvm::count_if(
      result.candidates, [](const PlanCandidate &c) { return c.fits; });
  os << header << "\n";
  os << llvm::formatv("searched {0} configurations ({1} compiled, {2} "
                      "refused by the pipeline); {3} fit{4}\n",
                      result.candidates.size() + result.failed,
                      result.candidates.size(), result.failed, fitting,
                      describeLimits(limits));
  os << llvm::formatv("  {0,4} {1,12} {2,16} {3,16}  {4}\n", "rank", "step",
                      "peak bytes", "traffic bytes", "configuration");
  size_t rank = 0;
  for (const PlanCandidate &c : result.candidates) {
    if (!c.fits || rank == shown)
      break;
    ++rank;
    os << llvm::formatv("  {0,4} {1,12} {2,16} {3,16}  {4}\n", rank,
                        formatSeconds(c.stepSeconds), c.peakBytes,
                        c.trafficBytes, c.flags());
  }
  if (fitting > shown)
    os << llvm::formatv("  ... and {0} more that fit\n", fitting - shown);
  if (fitting < result.candidates.size()) {
    const PlanCandidate &over = result.candidates[fitting];
    os << llvm::formatv(
        "  fastest over the limit: {0} with a peak of {1} "
        "bytes{2} ({3})\n",
        formatSeconds(over.stepSeconds), over.peakBytes,
        limits.host
            ? llvm::formatv(" and {0} of host memory", over.hostPeakBytes).str()
            : std::string(),
        over.flags());
  }
  if (const PlanCandidate *chosen = result.chosen())
    os << llvm::formatv("chosen: {0} (predicted peak {1} bytes a rank, step "
                        "{2})\n",
                        chosen->flags(), chosen->peakBytes,
                        formatSeconds(chosen->stepSeconds));
}

/// `options` (StageOptions text) with option `name` set to `value` in place
/// of any value it had (a list option would add to it).
static std::string withOption(llvm::StringRef options, llvm::StringRef name,
                              llvm::StringRef value) {
  std::string text;
  for (llvm::StringRef option : llvm::split(options, ' '))
    if (!option.empty() && option.split('=').first != name)
      text += " " + option.str();
  return text + " " + name.str() + "=" + value.str();
}

std::optional<std::string> decideAccumulation(llvm::StringRef input,
                                              DialectRegistry &registry,
                                              llvm::StringRef options) {
  StageOptions parsed;
  FailureOr<std::string> problem = parseStageOptions(options, parsed);
  if (failed(problem) || !problem->empty() || !parsed.accumulationUndecided())
    return std::nullopt;
  std::optional<int64_t> limit = parseByteSize(parsed.memoryLimit.getValue());
  PlanCandidate local;
  // Local accumulation always moves less (one gradient reduction a step
  // instead of K), so the only question is memory, and the exact answer is
  // the planned program's peak; when that program does not compile, the
  // sharded one's compile says why.
  bool fits =
      limit &&
      predictConfiguration(input, registry,
                           withOption(options, "accumulate", "local"), local) &&
      local.peakBytes <= *limit;
  return std::string(fits ? "local" : "sharded");
}

std::optional<PlanCandidate> predictWithoutRecompute(llvm::StringRef input,
                                                     DialectRegistry &registry,
                                                     llvm::StringRef options) {
  PlanCandidate baseline;
  if (!predictConfiguration(input, registry,
                            withOption(options, "recompute", "none"), baseline))
    return std::nullopt;
  return baseline;
}

} // namespace zero
