//===- Report.cpp - predicted memory and traffic per rank -----------------===//
//
// The compiler placed every buffer, so it knows each rank's peak: this pass
// replays the lowered program's allocations and collectives the way libzrt
// will execute and count them (runtime/core/memory.cpp, cpu/collectives.cpp),
// and prints the prediction next to the ZeRO paper's formulas. For the CUDA
// backend it also predicts the parts of the runtime workspace (memory outside
// the categories) that the program determines: the cuBLASLt workspace and
// the attention backward's statistics (zrt.h).
//
//===----------------------------------------------------------------------===//
#include "passes/PassUtils.h"
#include "passes/Passes.h"
#include "passes/RuntimeCalls.h"
#include "zero/zrt.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
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
/// Indexed by CollectiveCall::Kind.
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
};

/// The model and placement facts the formulas need.
struct Model {
  int64_t worldSize = 1, stage = 0, microBatches = 1;
  int64_t numParams = 0;      // Psi
  int64_t paramBytes = 0;     // bytes per parameter element (2 or 4)
};

int64_t elementBytes(int64_t dtype) { return dtype == ZRT_BF16 ? 2 : 4; }

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
                         << ": expected the lowered program (run "
                            "zero-lower-to-runtime first)";
      return signalPassFailure();
    }
    Ledger ledger;
    Model model;
    if (failed(replayDescribe(describe, ledger, model)))
      return signalPassFailure();
    // Argument buffers live for the whole run; the temporaries of the step
    // and of the apply function share one arena per category (they never
    // run at once), of the size zero-plan-memory planned.
    Arenas arenas;
    arenas.persistent = ledger.current;
    for (func::FuncOp body : {step, apply})
      if (body)
        if (auto planned =
                body->getAttrOfType<DenseI64ArrayAttr>("zero.arena_bytes")) {
          arenas.planned = true;
          for (auto [c, bytes] : llvm::enumerate(planned.asArrayRef()))
            if (c < ZRT_MEM_NUM_CATEGORIES)
              arenas.transient[c] = std::max(arenas.transient[c], bytes);
        }
    for (int64_t micro = 0; micro < model.microBatches; ++micro)
      if (failed(replayBody(step, ledger, model)))
        return signalPassFailure();
    if (apply && failed(replayBody(apply, ledger, model)))
      return signalPassFailure();
    if (format == "json")
      printJson(ledger, model, arenas);
    else
      printTable(ledger, model, arenas);
  }

  /// The argument buffers the runtime allocates before the first step.
  LogicalResult replayDescribe(func::FuncOp describe, Ledger &ledger,
                               Model &model) {
    WalkResult result = describe.walk([&](func::CallOp call) {
      auto arg = [&](unsigned i) { return getConstantIntValue(call.getOperand(i)); };
      StringRef callee = call.getCallee();
      if (callee == "zrt_declare_program") {
        model.worldSize = arg(2).value_or(1);
        model.stage = arg(3).value_or(0);
      } else if (callee == "zrt_declare_micro_batches") {
        model.microBatches = arg(1).value_or(1);
      } else if (callee == "zrt_declare_arg") {
        std::optional<int64_t> role = arg(3), dtype = arg(4), rank = arg(5),
                               sharded = arg(10);
        if (!role || !dtype || !rank || !sharded) {
          call.emitOpError() << getArgument()
                             << ": expected constant operands (run "
                                "canonicalize first)";
          return WalkResult::interrupt();
        }
        int64_t numel = 1;
        for (int64_t d = 0; d < *rank; ++d)
          numel *= arg(6 + d).value_or(0);
        bool isInt = *role == ZRT_ROLE_LABELS || *role == ZRT_ROLE_TOKENS ||
                     *role == ZRT_ROLE_TARGETS || *role == ZRT_ROLE_POSITIONS;
        int64_t size = isInt ? 4 : elementBytes(*dtype);
        int64_t count =
            *sharded ? sharding::shardSize(numel, model.worldSize) : numel;
        ledger.allocate(zrt_role_category(int32_t(*role)), count * size);
        if (*role == ZRT_ROLE_PARAM) {
          model.numParams += numel;
          model.paramBytes = size;
        }
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// One run of a lowered function: its allocations, frees and collectives.
  LogicalResult replayBody(func::FuncOp body, Ledger &ledger,
                           const Model &model) {
    DenseMap<Value, std::pair<int32_t, int64_t>> live;
    DenseMap<Value, int64_t> stagingOf; // Handle -> staging bytes.
    WalkResult result = body.walk([&](func::CallOp call) {
      auto arg = [&](unsigned i) { return getConstantIntValue(call.getOperand(i)); };
      StringRef callee = call.getCallee();
      if (callee == "zrt_alloc") {
        std::optional<int64_t> size = arg(1), category = arg(2);
        if (!size || !category) {
          call.emitOpError() << getArgument()
                             << ": expected constant sizes (run canonicalize "
                                "first)";
          return WalkResult::interrupt();
        }
        ledger.allocate(*category, *size);
        live[call.getResult(0)] = {int32_t(*category), *size};
      } else if (callee == "zrt_free") {
        auto it = live.find(call.getOperand(1));
        if (it != live.end()) {
          ledger.release(it->second.first, it->second.second);
          live.erase(it);
        }
      } else if (callee == "zrt_attention_grad") {
        std::optional<int64_t> batch = arg(9), seq = arg(10), heads = arg(11);
        if (batch && seq && heads)
          ledger.attentionStatistics = std::max(
              ledger.attentionStatistics,
              zrt_cuda_attention_statistics_bytes(*batch, *heads, *seq));
      } else if (callee == "zrt_wait") {
        ledger.release(ZRT_MEM_COMM, stagingOf.lookup(call.getOperand(1)));
      } else if (std::optional<CollectiveCall> collective =
                     readCollectiveCall(call, model.worldSize)) {
        // Blocking and asynchronous forms move the same bytes; a padded
        // all-gather or reduce-scatter holds a staging copy (comm memory)
        // from its start to its wait (at once for the blocking form).
        ledger.bytes[collective->kind] += collective->trafficBytes;
        ledger.calls[collective->kind] += 1;
        ledger.allocate(ZRT_MEM_COMM, collective->stagingBytes);
        if (collective->async)
          stagingOf[call.getResult(0)] = collective->stagingBytes;
        else
          ledger.release(ZRT_MEM_COMM, collective->stagingBytes);
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
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
            "their planned offsets):\n";
      int64_t total = 0;
      for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c) {
        int64_t bytes = a.persistent[c] + a.transient[c];
        total += bytes;
        os << llvm::formatv("  {0,-12} {1,16} = {2} + {3}\n",
                            kCategoryNames[c], bytes, a.persistent[c],
                            a.transient[c]);
      }
      os << llvm::formatv("  {0,-12} {1,16}\n", "total", total);
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
