//===- Report.cpp - predicted memory and traffic per rank -----------------===//
//
// The compiler placed every buffer, so it knows each rank's peak: this pass
// replays the zrt program's allocations and collectives the way libzrt
// will execute and count them (runtime/abi/memory.cpp, abi/collectives.cpp),
// and prints the prediction next to the ZeRO paper's formulas. For the CUDA
// backend it also predicts the parts of the runtime workspace (memory outside
// the categories) that the program determines: the cuBLASLt workspace and
// the attention backward's statistics (zrt.h).
//
//===----------------------------------------------------------------------===//
#include "passes/PassUtils.h"
#include "passes/Passes.h"
#include "zero/zrt.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <array>

namespace zero {
#define GEN_PASS_DEF_REPORT
#include "passes/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {
constexpr const char *kCategoryNames[ZRT_MEM_NUM_CATEGORIES] = {
    "param", "grad", "optimizer", "activation", "comm", "data"};
/// Indexed by zrt_collective.
constexpr int NumCollectives = 3;
constexpr const char *kCollectiveNames[NumCollectives] = {
    "all_gather", "reduce_scatter", "all_reduce"};

/// Allocations and traffic of one rank, as the runtime's ledger counts them.
struct Ledger {
  std::array<int64_t, ZRT_MEM_NUM_CATEGORIES> current{}, peak{};
  int64_t currentTotal = 0, peakTotal = 0;
  std::array<int64_t, NumCollectives> bytes{}, calls{};
  /// On the CUDA backend, outside the categories: the attention backward's
  /// statistics buffer, grown to the largest call (zrt.h).
  int64_t attentionStatistics = 0;

  void allocate(int32_t category, int64_t size) {
    current[category] += size;
    currentTotal += size;
    peak[category] = std::max(peak[category], current[category]);
    peakTotal = std::max(peakTotal, currentTotal);
  }
  void release(int32_t category, int64_t size) {
    current[category] -= size;
    currentTotal -= size;
  }
};

/// Arena sizes per category: the arguments, and the temporaries as
/// zero-plan-memory laid them out (absent when it did not run).
struct Arenas {
  bool planned = false;
  std::array<int64_t, ZRT_MEM_NUM_CATEGORIES> persistent{}, transient{};
  /// The staging copies of padded collectives: planned, not reserved (the
  /// runtime allocates them as they run).
  int64_t staging = 0;
};

/// The model and placement facts the formulas need.
struct Model {
  int64_t worldSize = 1, stage = 0, microBatches = 1;
  int64_t numParams = 0;      // Psi
  int64_t paramBytes = 0;     // bytes per parameter element (2 or 4)
};

struct ReportPass : zero::impl::ReportBase<ReportPass> {
  using ReportBase::ReportBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto describe = module.lookupSymbol<func::FuncOp>("zero_program_describe");
    auto step = module.lookupSymbol<func::FuncOp>("zero_program_step");
    auto apply = module.lookupSymbol<func::FuncOp>("zero_program_apply");
    if (format != "table" && format != "json") {
      module.emitError() << getArgument() << ": format must be table or json, "
                         << "got '" << format << "'";
      return signalPassFailure();
    }
    if (!describe || !step) {
      module.emitError() << getArgument()
                         << ": expected the zrt program (run "
                            "zero-lower-to-runtime first)";
      return signalPassFailure();
    }
    Ledger ledger;
    Model model;
    replayDescribe(describe, ledger, model);
    // Argument buffers live for the whole run; the temporaries of the step
    // and of the apply function share one arena per category (they never
    // run at once), of the size zero-plan-memory planned.
    Arenas arenas;
    arenas.persistent = ledger.current;
    for (func::FuncOp body : {step, apply})
      if (body)
        if (auto planned =
                body->getAttrOfType<DenseI64ArrayAttr>(zrt::kArenaBytesAttrName)) {
          arenas.planned = true;
          for (auto [c, bytes] : llvm::enumerate(planned.asArrayRef()))
            if (c < ZRT_MEM_NUM_CATEGORIES)
              arenas.transient[c] = std::max(arenas.transient[c], bytes);
          if (auto staging =
                  body->getAttrOfType<IntegerAttr>(zrt::kStagingBytesAttrName))
            arenas.staging = std::max(arenas.staging, staging.getInt());
        }
    for (int64_t micro = 0; micro < model.microBatches; ++micro)
      replayBody(step, ledger, model);
    if (apply)
      replayBody(apply, ledger, model);
    if (format == "json")
      printJson(ledger, model, arenas);
    else
      printTable(ledger, model, arenas);
  }

  /// The argument buffers the runtime allocates before the first step.
  void replayDescribe(func::FuncOp describe, Ledger &ledger, Model &model) {
    describe.walk([&](Operation *op) {
      if (auto program = dyn_cast<zrt::DeclareProgramOp>(op)) {
        model.worldSize = program.getWorldSize();
        model.stage = program.getStage();
      } else if (auto micro = dyn_cast<zrt::DeclareMicroBatchesOp>(op)) {
        model.microBatches = micro.getMicroBatches();
      } else if (auto arg = dyn_cast<zrt::DeclareArgOp>(op)) {
        auto type = cast<RankedTensorType>(arg.getType());
        int64_t numel = type.getNumElements();
        zrt::Role role = arg.getRole();
        bool isInt = role == zrt::Role::Labels || role == zrt::Role::Tokens ||
                     role == zrt::Role::Targets ||
                     role == zrt::Role::Positions;
        int64_t size = isInt ? 4 : (type.getElementType().isBF16() ? 2 : 4);
        int64_t count = arg.getSharded()
                            ? sharding::shardSize(numel, model.worldSize)
                            : numel;
        ledger.allocate(zrt_role_category(int32_t(role)), count * size);
        if (role == zrt::Role::Param) {
          model.numParams += numel;
          model.paramBytes = size;
        }
      }
    });
  }

  /// One run of a zrt function: its allocations, frees and collectives.
  void replayBody(func::FuncOp body, Ledger &ledger, const Model &model) {
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
            zrt_cuda_attention_statistics_bytes(batch, grad.getNumHeads(),
                                                seq));
      } else if (auto wait = dyn_cast<zrt::WaitOp>(op)) {
        ledger.release(ZRT_MEM_COMM, stagingOf.lookup(wait.getHandle()));
      } else if (auto collective = dyn_cast<zrt::CollectiveOpInterface>(op)) {
        // Blocking and asynchronous forms move the same bytes; a padded
        // all-gather or reduce-scatter holds a staging copy (comm memory)
        // from its start to its wait (at once for the blocking form).
        int kind = collective.getCollectiveKind();
        int64_t staging = collective.getStagingBytes(model.worldSize);
        ledger.bytes[kind] += collective.getTrafficBytes(model.worldSize);
        ledger.calls[kind] += 1;
        ledger.allocate(ZRT_MEM_COMM, staging);
        if (collective.isAsync())
          stagingOf[op->getResult(0)] = staging;
        else
          ledger.release(ZRT_MEM_COMM, staging);
      }
    });
  }

  /// Model-state bytes per rank by the ZeRO paper (2 + 2 + 12 bytes a
  /// parameter in mixed precision; 4 + 4 + 8 in fp32), and elements moved.
  static std::pair<std::string, double> memoryFormula(const Model &m) {
    double psi = m.numParams, n = m.worldSize;
    double p = m.paramBytes, g = m.paramBytes, k = 16 - p - g;
    switch (m.stage) {
    case 0:
      return {"16 Psi", (p + g + k) * psi};
    case 1:
      return {llvm::formatv("{0} Psi + {1} Psi/N", p + g, k).str(),
              (p + g) * psi + k * psi / n};
    case 2:
      return {llvm::formatv("{0} Psi + {1} Psi/N", p, g + k).str(),
              p * psi + (g + k) * psi / n};
    default:
      return {"16 Psi/N", 16 * psi / n};
    }
  }
  static std::pair<std::string, double> trafficFormula(const Model &m) {
    double psi = m.numParams;
    return m.stage == 3 ? std::make_pair(std::string("3 Psi"), 3 * psi)
                        : std::make_pair(std::string("2 Psi"), 2 * psi);
  }

  void printTable(const Ledger &l, const Model &m, const Arenas &a) {
    llvm::raw_ostream &os = llvm::outs();
    os << llvm::formatv("zero-opt report: ZeRO stage {0}, world size {1}, {2} "
                        "micro-batch(es) per step, Psi = {3} parameters of "
                        "{4} bytes\n",
                        m.stage, m.worldSize, m.microBatches, m.numParams,
                        m.paramBytes);
    os << "predicted peak memory per rank (bytes):\n";
    for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
      os << llvm::formatv("  {0,-12} {1,16}\n", kCategoryNames[c], l.peak[c]);
    os << llvm::formatv("  {0,-12} {1,16}\n", "total", l.peakTotal);
    int64_t states =
        l.peak[ZRT_MEM_PARAM] + l.peak[ZRT_MEM_GRAD] + l.peak[ZRT_MEM_OPTIMIZER];
    auto [memText, memValue] = memoryFormula(m);
    os << llvm::formatv("  model states (param + grad + optimizer) {0}; ZeRO "
                        "formula {1} = {2:F0}\n",
                        states, memText, memValue);
    if (a.planned) {
      os << "planned arenas per rank (bytes; arguments + temporaries at "
            "their planned offsets, reserved by the runtime):\n";
      int64_t total = 0;
      for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c) {
        int64_t bytes = a.persistent[c] + a.transient[c];
        total += bytes;
        os << llvm::formatv("  {0,-12} {1,16} = {2} + {3}\n",
                            kCategoryNames[c], bytes, a.persistent[c],
                            a.transient[c]);
      }
      os << llvm::formatv("  {0,-12} {1,16}\n", "total", total);
      os << llvm::formatv("  and up to {0} bytes of collective staging, which "
                          "the runtime allocates as padded collectives run\n",
                          a.staging);
    }
    os << "runtime workspace on the CUDA backend (bytes; not in the "
          "categories):\n";
    os << llvm::formatv("  {0,-20} {1,16}\n", "gemm",
                        ZRT_CUDA_GEMM_WORKSPACE_BYTES);
    os << llvm::formatv("  {0,-20} {1,16}\n", "attention statistics",
                        l.attentionStatistics);
    os << "  and the per-call kernel scratch, measured at run time\n";
    os << "predicted traffic per rank per step (bytes, calls):\n";
    int64_t total = 0;
    for (int k = 0; k < NumCollectives; ++k) {
      os << llvm::formatv("  {0,-14} {1,14} {2,6}\n", kCollectiveNames[k],
                          l.bytes[k], l.calls[k]);
      total += l.bytes[k];
    }
    auto [trafficText, trafficValue] = trafficFormula(m);
    os << llvm::formatv("  {0,-14} {1,14}\n", "total", total);
    os << llvm::formatv("  elements moved {0:F0}; ZeRO formula {1} = {2:F0}\n",
                        double(total) / m.paramBytes, trafficText,
                        trafficValue);
  }

  void printJson(const Ledger &l, const Model &m, const Arenas &a) {
    llvm::json::Object memory, traffic, calls, arenas;
    if (a.planned)
      for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
        arenas[kCategoryNames[c]] = llvm::json::Object{
            {"arguments", a.persistent[c]}, {"temporaries", a.transient[c]}};
    for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
      memory[kCategoryNames[c]] = l.peak[c];
    memory["total"] = l.peakTotal;
    for (int k = 0; k < NumCollectives; ++k) {
      traffic[kCollectiveNames[k]] = l.bytes[k];
      calls[kCollectiveNames[k]] = l.calls[k];
    }
    auto [memText, memValue] = memoryFormula(m);
    auto [trafficText, trafficValue] = trafficFormula(m);
    llvm::json::Object report{
        {"stage", m.stage},
        {"world_size", m.worldSize},
        {"micro_batches", m.microBatches},
        {"parameters", m.numParams},
        {"parameter_bytes", m.paramBytes},
        {"peak_memory_bytes", std::move(memory)},
        {"planned_arena_bytes", std::move(arenas)},
        {"planned_staging_bytes", a.staging},
        {"cuda_workspace_bytes",
         llvm::json::Object{{"gemm", ZRT_CUDA_GEMM_WORKSPACE_BYTES},
                            {"attention_statistics", l.attentionStatistics}}},
        {"traffic_bytes_per_step", std::move(traffic)},
        {"collective_calls_per_step", std::move(calls)},
        {"zero_formulas",
         llvm::json::Object{{"model_states", memText},
                            {"model_states_bytes", memValue},
                            {"traffic", trafficText},
                            {"traffic_elements", trafficValue}}}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(report)))
                 << "\n";
  }
};
} // namespace
