//===- MemoryPrediction.cpp - each rank's predicted memory and traffic ----===//
#include "passes/Analysis/MemoryPrediction.h"
#include "dialects/zero/ZeroDialect.h"
#include "dialects/zrt/ZrtDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;

namespace zero {

const char *const kMemoryCategoryNames[ZRT_MEM_NUM_CATEGORIES] = {
    "param", "grad", "optimizer",      "activation",
    "comm",  "data", "host_optimizer", "host_staging"};
const char *const kCollectiveKindNames[kNumCollectiveKinds] = {
#define ZRT_COLLECTIVE(KIND, name, ...) #name,
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
};
const char *const kGroupNames[ZRT_NUM_GROUPS] = {"world", "shard", "replica"};

void MemoryLedger::allocate(int32_t category, int64_t size) {
  current[category] += size;
  peak[category] = std::max(peak[category], current[category]);
  // The totals are the device's; host memory (--offload) has its own.
  if (zrt_mem_category_is_host(category)) {
    currentHost += size;
    peakHost = std::max(peakHost, currentHost);
    return;
  }
  currentTotal += size;
  peakTotal = std::max(peakTotal, currentTotal);
}

void MemoryLedger::release(int32_t category, int64_t size) {
  current[category] -= size;
  (zrt_mem_category_is_host(category) ? currentHost : currentTotal) -= size;
}

int32_t MemoryLedger::largestCategory() const {
  int32_t largest = 0;
  for (int32_t c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
    if (!zrt_mem_category_is_host(c) && peak[c] > peak[largest])
      largest = c;
  return largest;
}

namespace {

/// The argument buffers the runtime allocates before the first step.
void replayDescribe(func::FuncOp describe, MemoryLedger &ledger,
                    ProgramFacts &facts) {
  describe.walk([&](Operation *op) {
    if (auto program = dyn_cast<zrt::DeclareProgramOp>(op)) {
      facts.worldSize = program.getWorldSize();
      facts.stage = program.getStage();
    } else if (auto groups = dyn_cast<zrt::DeclareShardGroupsOp>(op)) {
      facts.shardGroupSize = groups.getSize();
    } else if (auto micro = dyn_cast<zrt::DeclareMicroBatchesOp>(op)) {
      facts.microBatches = micro.getMicroBatches();
    } else if (auto exact = dyn_cast<zrt::DeclareDeterministicOp>(op)) {
      facts.deterministicChunkRows = exact.getChunkRows();
    } else if (auto arg = dyn_cast<zrt::DeclareArgOp>(op)) {
      auto type = cast<RankedTensorType>(arg.getType());
      int64_t numel = type.getNumElements();
      zrt::Role role = arg.getRole();
      bool isInt = role == zrt::Role::Labels || role == zrt::Role::Tokens ||
                   role == zrt::Role::Targets || role == zrt::Role::Positions;
      // Floats, and 16-byte exact accumulators (--deterministic).
      int64_t size =
          isInt ? 4 : (type.getElementType().getIntOrFloatBitWidth() + 7) / 8;
      // Sharded over the shard group: declared before the arguments.
      int64_t shardCount =
          facts.shardGroupSize ? facts.shardGroupSize : facts.worldSize;
      int64_t count =
          arg.getSharded() ? sharding::shardSize(numel, shardCount) : numel;
      ledger.allocate(zrt_arg_category(int32_t(role), arg.getHost()),
                      count * size);
      if (role == zrt::Role::Param) {
        facts.numParams += numel;
        facts.paramBytes = size;
      }
    }
  });
}

/// One run of a zrt function: its allocations, frees and collectives.
void replayBody(func::FuncOp body, MemoryLedger &ledger,
                const ProgramFacts &facts) {
  DenseMap<Operation *, std::pair<int32_t, int64_t>> live;
  DenseMap<Value, int64_t> stagingOf; // Handle -> staging bytes.
  body.walk([&](Operation *op) {
    if (auto alloc = dyn_cast<zrt::AllocOp>(op)) {
      ledger.allocate(int32_t(alloc.getCategory()), alloc.getByteSize());
      live[alloc] = {int32_t(alloc.getCategory()), alloc.getByteSize()};
    } else if (auto free = dyn_cast<zrt::FreeOp>(op)) {
      auto it = live.find(zrt::getAllocation(free.getBuffer()));
      if (it != live.end()) {
        ledger.release(it->second.first, it->second.second);
        live.erase(it);
      }
    } else if (auto grad = dyn_cast<zrt::AttentionGradOp>(op)) {
      int64_t seq = grad.getSeqLen();
      int64_t batch = grad.getQ().getType().getShape()[0] / seq;
      ledger.attentionStatistics = std::max(
          ledger.attentionStatistics,
          zrt_cuda_attention_statistics_bytes(batch, grad.getNumHeads(), seq));
    } else if (auto copy = dyn_cast<zrt::CopyToHostOp>(op)) {
      ledger.offloadBytes[0] += copy.getByteSize();
      ledger.offloadCalls[0] += 1;
    } else if (auto copy = dyn_cast<zrt::CopyToDeviceOp>(op)) {
      ledger.offloadBytes[1] += copy.getByteSize();
      ledger.offloadCalls[1] += 1;
    } else if (auto wait = dyn_cast<zrt::WaitOp>(op)) {
      ledger.release(ZRT_MEM_COMM, stagingOf.lookup(wait.getHandle()));
    } else if (auto collective = dyn_cast<zrt::CollectiveOpInterface>(op)) {
      // Blocking and asynchronous forms move the same bytes; a padded
      // all-gather or reduce-scatter holds a staging copy (comm memory)
      // from its start to its wait (at once for the blocking form).
      int kind = collective.getCollectiveKind();
      int group = int(collective.getGroup());
      int64_t ranks =
          zrt::GroupSizes{facts.worldSize, facts.shardGroupSize}.sizeOf(
              collective);
      int64_t staging = collective.getStagingBytes(ranks);
      int64_t bytes = collective.getTrafficBytes(ranks);
      ledger.groupBytes[group] += bytes;
      ledger.groupCalls[group] += 1;
      int64_t elementBytes = collective.getElementBytes();
      ledger.bytes[kind] += bytes;
      ledger.calls[kind] += 1;
      ledger.elements[kind] += bytes / elementBytes;
      ledger.elementBytesSeen[kind] |= 1u << llvm::Log2_64(elementBytes);
      ledger.allocate(ZRT_MEM_COMM, staging);
      if (collective.isAsync())
        stagingOf[op->getResult(0)] = staging;
      else
        ledger.release(ZRT_MEM_COMM, staging);
    }
  });
}

/// Whether `apply` reduces gradients (local accumulation): a reduce-scatter,
/// or an all-reduce of more than the one element of the squared norm.
bool reducesGradients(func::FuncOp apply) {
  bool found = false;
  apply.walk([&](zrt::CollectiveOpInterface collective) {
    // Hybrid sharding's all-reduce across the replicas runs once a step
    // whatever the accumulation: what counts is the reduction in the group.
    if (collective.getGroup() == zrt::Group::Replica)
      return;
    // A sum of a tensor (the loss's all-reduce is one element).
    const zrt::CollectiveInfo &info =
        zrt::getCollectiveInfo(collective.getCollectiveKind());
    found |= info.sums && (info.sharded() || collective.getWholeElements() > 1);
  });
  return found;
}

} // namespace

FailureOr<RankPrediction> predictRank(ModuleOp module, StringRef passName) {
  auto describe = module.lookupSymbol<func::FuncOp>("zero_program_describe");
  auto step = module.lookupSymbol<func::FuncOp>("zero_program_step");
  auto apply = module.lookupSymbol<func::FuncOp>("zero_program_apply");
  auto eval = module.lookupSymbol<func::FuncOp>("zero_program_eval");
  if (!describe || !step)
    return module.emitError()
           << passName
           << ": expected the zrt program (run zero-lower-to-zrt first)";
  RankPrediction prediction;
  replayDescribe(describe, prediction.ledger, prediction.facts);
  // Argument buffers live for the whole run; the temporaries of the step,
  // the apply function and the validation step share one arena per
  // category (they never run at once), of the size zero-plan-memory planned.
  PlannedArenas &arenas = prediction.arenas;
  arenas.persistent = prediction.ledger.current;
  for (func::FuncOp body : {step, apply, eval}) {
    if (!body)
      continue;
    auto planned =
        body->getAttrOfType<DenseI64ArrayAttr>(zrt::kArenaBytesAttrName);
    if (!planned)
      continue;
    arenas.planned = true;
    for (auto [c, bytes] : llvm::enumerate(planned.asArrayRef()))
      if (c < ZRT_MEM_NUM_CATEGORIES)
        arenas.transient[c] = std::max(arenas.transient[c], bytes);
    if (auto staging =
            body->getAttrOfType<IntegerAttr>(zrt::kStagingBytesAttrName))
      arenas.staging = std::max(arenas.staging, staging.getInt());
    if (auto shared =
            body->getAttrOfType<IntegerAttr>(zrt::kSharedArenaBytesAttrName))
      arenas.shared = std::max(arenas.shared, shared.getInt());
  }
  describe.walk([&](zrt::DeclareSharedArenaOp) { arenas.sharedBinds = true; });
  prediction.facts.gradientReductions =
      apply && reducesGradients(apply) ? 1 : prediction.facts.microBatches;
  for (int64_t micro = 0; micro < prediction.facts.microBatches; ++micro)
    replayBody(step, prediction.ledger, prediction.facts);
  if (apply)
    replayBody(apply, prediction.ledger, prediction.facts);
  // Validation between steps: its forward's temporaries on top of the
  // arguments count towards the peaks, but its collectives are not the
  // step's traffic.
  if (eval) {
    MemoryLedger validation = prediction.ledger;
    replayBody(eval, validation, prediction.facts);
    prediction.ledger.peak = validation.peak;
    prediction.ledger.peakTotal = validation.peakTotal;
    prediction.ledger.attentionStatistics = validation.attentionStatistics;
  }
  return prediction;
}

std::optional<RankPrediction> predictCompiledCopy(
    ModuleOp module, OpPassManager &pm, StringRef passName,
    llvm::function_ref<LogicalResult(OpPassManager &, ModuleOp)> runPipeline) {
  SmallVector<Operation *> originals;
  for (Operation &op : *module.getBody())
    originals.push_back(&op);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto copy = ModuleOp::create(b, module.getLoc());
  copy->setAttrs(module->getAttrDictionary());
  for (Operation *op : originals)
    copy.getBody()->push_back(op->clone());
  std::optional<RankPrediction> prediction;
  {
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    if (succeeded(runPipeline(pm, copy)))
      if (FailureOr<RankPrediction> predicted = predictRank(copy, passName);
          succeeded(predicted))
        prediction = *predicted;
  }
  copy.erase();
  return prediction;
}

std::optional<int64_t> parseByteSize(llvm::StringRef text) {
  text = text.trim();
  // The unit is the trailing letters; what is before it, the number.
  size_t unitStart = text.size();
  while (unitStart > 0 && llvm::isAlpha(text[unitStart - 1]))
    --unitStart;
  double number;
  if (unitStart == 0 || text.take_front(unitStart).trim().getAsDouble(number))
    return std::nullopt;
  llvm::StringRef unit = text.drop_front(unitStart);
  double scale = 1;
  if (!unit.empty() && !unit.equals_insensitive("b")) {
    size_t power = llvm::StringRef("KMGT").find(llvm::toUpper(unit[0]));
    llvm::StringRef rest = unit.drop_front();
    if (power == llvm::StringRef::npos)
      return std::nullopt;
    if (rest == "iB" || rest == "i")
      scale = std::pow(1024.0, power + 1);
    else if (rest.empty() || rest.equals_insensitive("b"))
      scale = std::pow(1000.0, power + 1);
    else
      return std::nullopt;
  }
  double bytes = number * scale;
  if (!(bytes >= 1) || bytes > 9.0e18)
    return std::nullopt;
  return int64_t(std::llround(bytes));
}

FailureOr<int64_t> parseLimitOption(Operation *op, StringRef passName,
                                    StringRef limit) {
  if (std::optional<int64_t> bytes = parseByteSize(limit))
    return *bytes;
  return op->emitError() << passName << ": limit='" << limit
                         << "' is not a byte count (like 80GiB, 40GB, 1.5e9)";
}

} // namespace zero
