//===- Report.cpp - predicted memory and traffic per rank -----------------===//
//
// The compiler placed every buffer, so it knows each rank's peak: this pass
// prints the prediction of MemoryPrediction.h (the zrt program replayed the
// way libzrt executes and counts it) next to the ZeRO paper's formulas. For the
// CUDA backend it also predicts the parts of the runtime workspace (memory
// outside the categories) that the program determines: the cuBLASLt workspace
// and the attention backward's statistics (zrt.h).
//
//===----------------------------------------------------------------------===//
#include "passes/Analysis/MemoryPrediction.h"
#include "passes/Analysis/Passes.h"
#include "passes/Analysis/SchedulePrediction.h"
#include "passes/Utils/PassUtils.h"
#include "zero/zrt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <array>

namespace zero {
#define GEN_PASS_DEF_REPORT
#include "passes/Analysis/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {
struct ReportPass : zero::impl::ReportBase<ReportPass> {
  friend struct zero::TimeModelOptions; // reads the time model's options

  using ReportBase::ReportBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (format != "table" && format != "json") {
      module.emitError() << getArgument() << ": format must be table or json, "
                         << "got '" << format << "'";
      return signalPassFailure();
    }
    FailureOr<RankPrediction> prediction = predictRank(module, getArgument());
    if (failed(prediction))
      return signalPassFailure();
    FailureOr<TimeModel> model = timeModelFromOptions(
        module, getArgument(), TimeModelOptions::of(*this));
    if (failed(model))
      return signalPassFailure();
    FailureOr<SchedulePrediction> schedule =
        predictSchedule(module, *model, getArgument());
    if (failed(schedule))
      return signalPassFailure();
    recompute = module->getAttrOfType<DictionaryAttr>(kRecomputeAttrName);
    if (format == "json") {
      printJson(prediction->ledger, prediction->facts, prediction->arenas,
                scheduleJson(*model, *schedule));
    } else {
      printTable(prediction->ledger, prediction->facts, prediction->arenas);
      printSchedule(*model, *schedule);
    }
  }

  /// nn-recompute's record (zero.recompute), or null.
  DictionaryAttr recompute;

  int64_t recomputeNumber(StringRef name) const {
    auto value = recompute ? recompute.getAs<IntegerAttr>(name) : nullptr;
    return value ? value.getInt() : -1;
  }

  SmallVector<StringRef> recomputedUnits() const {
    SmallVector<StringRef> names;
    if (auto units = recompute ? recompute.getAs<ArrayAttr>("units") : nullptr)
      for (auto unit : units.getAsRange<StringAttr>())
        names.push_back(unit.getValue());
    return names;
  }

  /// One line: the recomputed units, the ops run twice, and the activation
  /// and total peaks next to the program's without recomputation.
  void printRecompute(const MemoryLedger &l) const {
    SmallVector<StringRef> units = recomputedUnits();
    llvm::raw_ostream &os = llvm::outs();
    os << llvm::formatv("recompute: {0} unit(s) ({1}), {2} forward op(s) "
                        "run again in the backward; activation peak {3} "
                        "bytes",
                        units.size(), llvm::join(units, ", "),
                        recomputeNumber("ops"), l.peak[ZRT_MEM_ACTIVATION]);
    int64_t activationWithout = baselineActivationPeak;
    int64_t peakWithout = baselinePeak;
    if (activationWithout >= 0)
      os << llvm::formatv(" ({0} without recomputation), total peak {1} "
                          "({2} without)",
                          activationWithout, l.peakTotal, peakWithout);
    os << "\n";
  }

  static std::string describeModel(const TimeModel &model) {
    std::string text =
        llvm::formatv("{0:F1} GFLOP/s, memory {1:F1} GB/s, link {2:F2} "
                      "GB/s and {3:F1} us a step",
                      model.computeFlops / 1e9, model.memoryBandwidth / 1e9,
                      model.linkBandwidth / 1e9, model.linkLatency * 1e6)
            .str();
    if (model.ranksPerNode > 0)
      text += llvm::formatv(", {0} ranks a node, across nodes {1:F2} GB/s "
                            "and {2:F1} us a step",
                            model.ranksPerNode, model.interNodeBandwidth / 1e9,
                            model.interNodeLatency * 1e6)
                  .str();
    if (model.hostMemoryBandwidth > 0)
      text += llvm::formatv(", host memory {0:F1} GB/s",
                            model.hostMemoryBandwidth / 1e9)
                  .str();
    if (model.hostLinkBandwidth > 0)
      text += llvm::formatv(", host link {0:F1} GB/s",
                            model.hostLinkBandwidth / 1e9)
                  .str();
    if (model.commOverlap < 1)
      text += llvm::formatv(", collectives {0:F0}% overlapped",
                            model.commOverlap * 100)
                  .str();
    if (model.collectiveStartSeconds > 0 || model.kernelOverheadSeconds > 0)
      text += llvm::formatv(", {0} a collective start, {1} a kernel outside "
                            "it",
                            formatSeconds(model.collectiveStartSeconds),
                            formatSeconds(model.kernelOverheadSeconds))
                  .str();
    return text;
  }

  /// Where a collective starts and is waited for, between which kernels.
  static std::string positions(const PlannedCollective &c) {
    std::string where = c.function == "apply"
                            ? std::string("apply")
                            : llvm::formatv("step#{0}", c.microBatch).str();
    if (c.blocking)
      return llvm::formatv("{0} @{1} blocking, after {2}, before {3}", where,
                           c.startPosition, c.kernelBeforeStart,
                           c.kernelAfterWait)
          .str();
    return llvm::formatv("{0} @{1}..@{2}, after {3}, before {4}", where,
                         c.startPosition, c.waitPosition, c.kernelBeforeStart,
                         c.kernelAfterWait)
        .str();
  }

  /// One line a collective: its sequence number (the runtime's), what it
  /// moves, where it starts and is waited for (op positions in the zrt
  /// function), the kernels between, and the predicted times.
  void printSchedule(const TimeModel &model, const SchedulePrediction &s) {
    llvm::raw_ostream &os = llvm::outs();
    os << "predicted schedule of one step (" << describeModel(model)
       << "; --check-schedule holds the run to it):\n";
    os << llvm::formatv("  step {0}: kernels {1}, waits blocking them {2}",
                        formatSeconds(s.stepSeconds),
                        formatSeconds(s.computeSeconds),
                        formatSeconds(s.exposedSeconds));
    if (model.commOverlap < 1)
      os << llvm::formatv(", collectives on the compute core {0}",
                          formatSeconds(s.sharedSeconds));
    if (s.overheadSeconds > 0)
      os << llvm::formatv(", starts and overhead {0}",
                          formatSeconds(s.overheadSeconds));
    if (s.hostTaskSeconds > 0) {
      os << llvm::formatv(", host tasks {0} (",
                          formatSeconds(s.hostTaskSeconds));
      if (model.commOverlap < 1)
        os << llvm::formatv("on the compute core {0}, ",
                            formatSeconds(s.hostSharedSeconds));
      os << llvm::formatv("waited for {0})", formatSeconds(s.hostWaitSeconds));
    }
    os << "\n";
    os << llvm::formatv("  {0,4} {1,-14} {2,12} {3,7} {4,10} {5,10} {6,10} "
                        "{7,10}  {8}\n",
                        "#", "collective", "bytes", "kernels", "hidden by",
                        "queued", "transfer", "exposed",
                        "where (op positions), what");
    for (const PlannedCollective &c : s.collectives)
      os << llvm::formatv("  {0,4} {1,-14} {2,12} {3,7} {4,10} {5,10} {6,10} "
                          "{7,10}  {8}{9}\n",
                          c.sequence, kCollectiveKindNames[c.kind],
                          c.tensorBytes, c.kernelsBetween,
                          formatSeconds(c.computeBetween),
                          formatSeconds(c.queued), formatSeconds(c.transfer),
                          formatSeconds(c.exposed), positions(c),
                          c.label.empty() ? "" : ", " + c.label);
  }

  static llvm::json::Object scheduleJson(const TimeModel &model,
                                         const SchedulePrediction &s) {
    llvm::json::Array collectives;
    for (const PlannedCollective &c : s.collectives)
      collectives.push_back(
          llvm::json::Object{{"sequence", c.sequence},
                             {"kind", kCollectiveKindNames[c.kind]},
                             {"bytes", c.tensorBytes},
                             {"label", c.label},
                             {"function", c.function},
                             {"micro_batch", c.microBatch},
                             {"blocking", c.blocking},
                             {"start_position", c.startPosition},
                             {"wait_position", c.waitPosition},
                             {"kernel_before_start", c.kernelBeforeStart},
                             {"kernel_after_wait", c.kernelAfterWait},
                             {"kernels_between", c.kernelsBetween},
                             {"compute_between_seconds", c.computeBetween},
                             {"queued_seconds", c.queued},
                             {"transfer_seconds", c.transfer},
                             {"exposed_seconds", c.exposed}});
    return llvm::json::Object{
        {"time_model",
         llvm::json::Object{
             {"gemm_flops", model.computeFlops},
             {"memory_bandwidth", model.memoryBandwidth},
             {"link_bandwidth", model.linkBandwidth},
             {"link_latency", model.linkLatency},
             {"ranks_per_node", model.ranksPerNode},
             {"host_link_bandwidth", model.hostLinkBandwidth},
             {"host_memory_bandwidth", model.hostMemoryBandwidth},
             {"inter_node_bandwidth", model.interNodeBandwidth},
             {"inter_node_latency", model.interNodeLatency},
             {"comm_overlap", model.commOverlap},
             {"collective_start_seconds", model.collectiveStartSeconds},
             {"kernel_overhead_seconds", model.kernelOverheadSeconds}}},
        {"step_seconds", s.stepSeconds},
        {"compute_seconds", s.computeSeconds},
        {"exposed_seconds", s.exposedSeconds},
        {"shared_seconds", s.sharedSeconds},
        {"overhead_seconds", s.overheadSeconds},
        {"host_task_seconds", s.hostTaskSeconds},
        {"host_shared_seconds", s.hostSharedSeconds},
        {"host_wait_seconds", s.hostWaitSeconds},
        {"collectives", std::move(collectives)}};
  }

  /// Model-state bytes per rank by the ZeRO paper (2 + 2 + 12 bytes a
  /// parameter in mixed precision; 4 + 4 + 8 in fp32), and elements moved.
  static std::pair<std::string, double> memoryFormula(const ProgramFacts &m) {
    // With hybrid sharding the state is sharded over the G ranks of a group.
    double psi = m.numParams,
           n = m.shardGroupSize ? m.shardGroupSize : m.worldSize;
    double p = m.paramBytes, g = m.paramBytes, k = 16 - p - g;
    StringRef over = m.shardGroupSize ? "G" : "N";
    switch (m.stage) {
    case 0:
      return {"16 Psi", (p + g + k) * psi};
    case 1:
      return {llvm::formatv("{0} Psi + {1} Psi/{2}", p + g, k, over).str(),
              (p + g) * psi + k * psi / n};
    case 2:
      return {llvm::formatv("{0} Psi + {1} Psi/{2}", p, g + k, over).str(),
              p * psi + (g + k) * psi / n};
    default:
      return {llvm::formatv("16 Psi/{0}", over).str(), 16 * psi / n};
    }
  }
  /// Elements moved per step; with hybrid sharding, the in-group formula
  /// plus the all-reduce of the gradient shards across the groups, once a
  /// step (2 Psi/G).
  static std::pair<std::string, double> trafficFormula(const ProgramFacts &m) {
    auto [text, value] = groupTrafficFormula(m);
    if (!m.shardGroupSize)
      return {text, value};
    return {text + " + 2 Psi/G", value + 2.0 * m.numParams / m.shardGroupSize};
  }
  /// Elements moved per step in the group the state is sharded over: stage 3
  /// gathers every micro-batch, and the gradients are reduced once per
  /// micro-batch or once (local).
  static std::pair<std::string, double>
  groupTrafficFormula(const ProgramFacts &m) {
    double psi = m.numParams, k = m.microBatches, r = m.gradientReductions;
    if (m.microBatches == 1)
      return m.stage == 3 ? std::make_pair(std::string("3 Psi"), 3 * psi)
                          : std::make_pair(std::string("2 Psi"), 2 * psi);
    auto times = [](int64_t n) { return llvm::formatv(" x {0}", n).str(); };
    switch (m.stage) {
    case 0:
      return {"2 Psi" + times(m.gradientReductions), 2 * psi * r};
    case 1:
    case 2:
      return {"Psi" + times(m.gradientReductions) + " + Psi", psi * r + psi};
    default:
      return {"2 Psi" + times(m.microBatches) + " + Psi" +
                  times(m.gradientReductions),
              2 * psi * k + psi * r};
    }
  }

  static zrt::GroupSizes groupSizes(const ProgramFacts &m) {
    return {m.worldSize, m.shardGroupSize};
  }

  /// "2", "4" or "2+4": the element sizes a collective kind moved.
  static std::string elementSizes(unsigned seen) {
    SmallVector<std::string> sizes;
    for (unsigned bit = 0; bit < 8; ++bit)
      if (seen & (1u << bit))
        sizes.push_back(std::to_string(1u << bit));
    return sizes.empty() ? "-" : llvm::join(sizes, "+");
  }

  void printTable(const MemoryLedger &l, const ProgramFacts &m,
                  const PlannedArenas &a) {
    llvm::raw_ostream &os = llvm::outs();
    os << llvm::formatv("zero-opt report: ZeRO stage {0}, world size {1}, {2} "
                        "micro-batch(es) per step, Psi = {3} parameters of "
                        "{4} bytes\n",
                        m.stage, m.worldSize, m.microBatches, m.numParams,
                        m.paramBytes);
    if (m.shardGroupSize)
      os << llvm::formatv("hybrid sharding: state sharded within {0} groups "
                          "of G = {1} consecutive ranks, replicated across "
                          "them\n",
                          m.worldSize / m.shardGroupSize, m.shardGroupSize);
    if (m.deterministicChunkRows)
      os << llvm::formatv("deterministic: exact (128-bit fixed-point) sums "
                          "of gradients, losses and norms; each rank "
                          "computes chunks of {0} row(s) per micro-batch\n",
                          m.deterministicChunkRows);
    if (recompute)
      printRecompute(l);
    os << "predicted peak memory per rank (bytes):\n";
    for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
      if (!zrt_mem_category_is_host(c))
        os << llvm::formatv("  {0,-12} {1,16}\n", kMemoryCategoryNames[c],
                            l.peak[c]);
    os << llvm::formatv("  {0,-12} {1,16}\n", "total", l.peakTotal);
    // --offload=optimizer: the host's memory, apart from the device's.
    if (l.peakHost) {
      os << "  in host memory (--offload=optimizer; not in the total):\n";
      for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
        if (zrt_mem_category_is_host(c))
          os << llvm::formatv("  {0,-14} {1,14}\n", kMemoryCategoryNames[c],
                              l.peak[c]);
      os << llvm::formatv("  {0,-14} {1,14}\n", "host total", l.peakHost);
      os << llvm::formatv("  offload copies per step: to host {0} bytes in "
                          "{1} calls, to device {2} bytes in {3} calls\n",
                          l.offloadBytes[0], l.offloadCalls[0],
                          l.offloadBytes[1], l.offloadCalls[1]);
    }
    // The states wherever they live: offload moves them, the formula
    // counts them.
    int64_t states = l.peak[ZRT_MEM_PARAM] + l.peak[ZRT_MEM_GRAD] +
                     l.peak[ZRT_MEM_OPTIMIZER] + l.peak[ZRT_MEM_HOST_OPTIMIZER];
    auto [memText, memValue] = memoryFormula(m);
    os << llvm::formatv("  model states (param + grad + optimizer{0}) {1}; "
                        "ZeRO formula {2} = {3:F0}\n",
                        l.peakHost ? " + host_optimizer" : "", states, memText,
                        memValue);
    if (a.planned) {
      os << "planned arenas per rank (bytes; arguments + temporaries at "
            "their planned offsets, reserved by the runtime):\n";
      int64_t total = 0;
      for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c) {
        if (zrt_mem_category_is_host(c))
          continue; // Below, apart from the device's.
        int64_t bytes = a.persistent[c] + a.transient[c];
        total += bytes;
        os << llvm::formatv("  {0,-12} {1,16} = {2} + {3}\n",
                            kMemoryCategoryNames[c], bytes, a.persistent[c],
                            a.transient[c]);
      }
      os << llvm::formatv("  {0,-12} {1,16}\n", "total", total);
      int64_t transient = 0, hostBytes = 0;
      for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c) {
        if (zrt_mem_category_is_host(c))
          hostBytes += a.persistent[c] + a.transient[c];
        else
          transient += a.transient[c];
      }
      os << llvm::formatv("  temporaries of all categories in one shared "
                          "arena: {0} bytes, against {1} in one arena per "
                          "category; reserved: {2}\n",
                          a.shared, transient,
                          a.sharedBinds ? "the shared arena" : "per category");
      if (a.sharedBinds)
        os << llvm::formatv("  {0,-12} {1,16}\n", "total reserved",
                            total - transient + a.shared);
      os << llvm::formatv("  and up to {0} bytes of collective staging, which "
                          "the runtime allocates as padded collectives run\n",
                          a.staging);
      if (hostBytes) {
        os << "  in host memory (arguments + temporaries in a host arena of "
              "their own):\n";
        for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
          if (zrt_mem_category_is_host(c))
            os << llvm::formatv("  {0,-14} {1,14} = {2} + {3}\n",
                                kMemoryCategoryNames[c],
                                a.persistent[c] + a.transient[c],
                                a.persistent[c], a.transient[c]);
        os << llvm::formatv("  {0,-14} {1,14}\n", "host total", hostBytes);
      }
    }
    os << "runtime workspace on the CUDA backend (bytes; not in the "
          "categories):\n";
    os << llvm::formatv("  {0,-20} {1,16}\n", "gemm",
                        ZRT_CUDA_GEMM_WORKSPACE_BYTES);
    os << llvm::formatv("  {0,-20} {1,16}\n", "attention statistics",
                        l.attentionStatistics);
    os << "  and the per-call kernel scratch, measured at run time\n";
    os << llvm::formatv("predicted traffic per rank per step (bytes, calls, "
                        "bytes per element; gradients reduced {0} time(s)):\n",
                        m.gradientReductions);
    int64_t total = 0, elements = 0;
    for (int k = 0; k < kNumCollectiveKinds; ++k) {
      os << llvm::formatv("  {0,-14} {1,14} {2,6} {3,4}\n",
                          kCollectiveKindNames[k], l.bytes[k], l.calls[k],
                          elementSizes(l.elementBytesSeen[k]));
      total += l.bytes[k];
      elements += l.elements[k];
    }
    auto [trafficText, trafficValue] = trafficFormula(m);
    os << llvm::formatv("  {0,-14} {1,14}\n", "total", total);
    if (m.shardGroupSize)
      for (int g = 0; g < ZRT_NUM_GROUPS; ++g)
        os << llvm::formatv("  over {0,-9} {1,14} {2,6}  ({3} ranks)\n",
                            kGroupNames[g], l.groupBytes[g], l.groupCalls[g],
                            groupSizes(m).sizeOf(zrt::Group(g)));
    os << llvm::formatv("  elements moved {0}; ZeRO formula {1} = {2:F0}\n",
                        elements, trafficText, trafficValue);
  }

  /// null without recomputation; the "without" peaks are null when the
  /// baseline was not compiled.
  llvm::json::Value recomputeJson() const {
    if (!recompute)
      return nullptr;
    auto orNull = [](int64_t value) -> llvm::json::Value {
      return value < 0 ? llvm::json::Value(nullptr) : value;
    };
    llvm::json::Array units;
    for (StringRef unit : recomputedUnits())
      units.push_back(unit);
    return llvm::json::Object{
        {"units", std::move(units)},
        {"recomputed_ops", recomputeNumber("ops")},
        {"activation_peak_without_bytes", orNull(baselineActivationPeak)},
        {"peak_without_bytes", orNull(baselinePeak)}};
  }

  void printJson(const MemoryLedger &l, const ProgramFacts &m,
                 const PlannedArenas &a, llvm::json::Object schedule) {
    llvm::json::Object memory, traffic, calls, elementBytes, arenas;
    if (a.planned)
      for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
        arenas[kMemoryCategoryNames[c]] = llvm::json::Object{
            {"arguments", a.persistent[c]}, {"temporaries", a.transient[c]}};
    for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
      memory[kMemoryCategoryNames[c]] = l.peak[c];
    memory["total"] = l.peakTotal;
    memory["host_total"] = l.peakHost;
    llvm::json::Object offload{{"to_host_bytes", l.offloadBytes[0]},
                               {"to_host_calls", l.offloadCalls[0]},
                               {"to_device_bytes", l.offloadBytes[1]},
                               {"to_device_calls", l.offloadCalls[1]}};
    llvm::json::Object groups;
    if (m.shardGroupSize)
      for (int g = 0; g < ZRT_NUM_GROUPS; ++g)
        groups[kGroupNames[g]] =
            llvm::json::Object{{"ranks", groupSizes(m).sizeOf(zrt::Group(g))},
                               {"bytes", l.groupBytes[g]},
                               {"calls", l.groupCalls[g]}};
    for (int k = 0; k < kNumCollectiveKinds; ++k) {
      traffic[kCollectiveKindNames[k]] = l.bytes[k];
      calls[kCollectiveKindNames[k]] = l.calls[k];
      elementBytes[kCollectiveKindNames[k]] =
          elementSizes(l.elementBytesSeen[k]);
    }
    auto [memText, memValue] = memoryFormula(m);
    auto [trafficText, trafficValue] = trafficFormula(m);
    llvm::json::Object report{
        {"stage", m.stage},
        {"world_size", m.worldSize},
        {"shard_group_size", m.shardGroupSize ? m.shardGroupSize : m.worldSize},
        {"micro_batches", m.microBatches},
        {"deterministic_chunk_rows", m.deterministicChunkRows},
        {"parameters", m.numParams},
        {"parameter_bytes", m.paramBytes},
        {"peak_memory_bytes", std::move(memory)},
        {"planned_arena_bytes", std::move(arenas)},
        {"planned_staging_bytes", a.staging},
        {"planned_shared_arena_bytes", a.shared},
        {"shared_arena_binds", a.sharedBinds},
        {"cuda_workspace_bytes",
         llvm::json::Object{{"gemm", ZRT_CUDA_GEMM_WORKSPACE_BYTES},
                            {"attention_statistics", l.attentionStatistics}}},
        {"traffic_bytes_per_step", std::move(traffic)},
        {"collective_calls_per_step", std::move(calls)},
        {"traffic_per_group", m.shardGroupSize
                                  ? llvm::json::Value(std::move(groups))
                                  : llvm::json::Value(nullptr)},
        {"collective_element_bytes", std::move(elementBytes)},
        {"offload_copies_per_step", std::move(offload)},
        {"gradient_reductions_per_step", m.gradientReductions},
        {"schedule", std::move(schedule)},
        {"recompute", recomputeJson()},
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
