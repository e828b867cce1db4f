//===- SchedulePrediction.cpp - when each collective runs, predicted ------===//
#include "passes/Analysis/SchedulePrediction.h"

#include "dialects/zrt/ZrtDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace mlir;

namespace zero {

namespace {

int64_t bufferBytes(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

/// Ops that cost the compute thread nothing the model counts.
bool isBookkeeping(Operation *op) {
  return isa<zrt::FreeOp, zrt::ViewOp, zrt::WaitOp, zrt::WatchGradientOp,
             zrt::ClipCoefficientOp, zrt::HostTaskBeginOp, zrt::HostTaskEndOp,
             zrt::HostWaitOp, zrt::HostWaitAllOp, func::ReturnOp>(op) ||
         op->getName().getStringRef().starts_with("zrt.declare_");
}

} // namespace

int64_t kernelFlops(Operation *op) {
  auto kernel = dyn_cast<zrt::KernelOpInterface>(op);
  return kernel ? kernel.getFlops() : 0;
}

double TimeModel::kernelSeconds(Operation *op) const {
  if (isBookkeeping(op) || isa<zrt::CollectiveOpInterface>(op))
    return 0;
  if (isa<zrt::CopyToHostOp, zrt::CopyToDeviceOp>(op) && hostLinkBandwidth > 0)
    return double(zrt::getByteSize(op->getOperand(0))) / hostLinkBandwidth;
  double bandwidth = memoryBandwidth;
  if (op->hasAttr("on_host") && hostMemoryBandwidth > 0)
    bandwidth = hostMemoryBandwidth;
  int64_t bytes = 0;
  if (auto alloc = dyn_cast<zrt::AllocOp>(op)) {
    // Zero-filled as it is allocated, unless its first kernel overwrites it.
    bytes = alloc.isZeroFilled() ? alloc.getByteSize() : 0;
  } else if (auto copy = dyn_cast<zrt::CopyOp>(op)) {
    bytes = 2 * int64_t(copy.getBytes());
  } else if (auto kernel = dyn_cast<zrt::KernelOpInterface>(op)) {
    bytes = kernel.getStreamedBytes();
  } else {
    for (Value operand : op->getOperands())
      bytes += bufferBytes(operand);
  }
  return std::max(double(kernelFlops(op)) / computeFlops,
                  double(bytes) / bandwidth);
}

double TimeModel::collectiveSeconds(zrt_collective kind, int64_t tensorBytes,
                                    int64_t worldSize, bool acrossNodes) const {
  if (worldSize <= 1)
    return 0;
  double bandwidth = acrossNodes ? interNodeBandwidth : linkBandwidth;
  double latency = acrossNodes ? interNodeLatency : linkLatency;
  // A ring passes a sharded collective's tensor once; a sum of a whole
  // buffer is a reduce-scatter and an all-gather: twice.
  const zrt::CollectiveInfo &info = zrt::getCollectiveInfo(kind);
  double steps = worldSize - 1, passes = !info.sharded() && info.sums ? 2 : 1;
  return passes * (steps * latency +
                   steps / worldSize * double(tensorBytes) / bandwidth);
}

bool TimeModel::spansNodes(zrt::Group group,
                           const zrt::GroupSizes &sizes) const {
  int64_t node = ranksPerNode, world = sizes.worldSize;
  if (node <= 0 || world <= node)
    return false;
  if (group != zrt::Group::Shard)
    return true; // Every rank, or one rank of each shard group.
  // G consecutive ranks, aligned to multiples of G: inside a node when G
  // divides the node.
  int64_t shard = sizes.sizeOf(zrt::Group::Shard);
  return node % shard != 0;
}

namespace {

/// The clocks, carried from one function run to the next, and the kernels
/// run so far.
struct Clocks {
  double compute = 0, comm = 0;
  double kernels = 0, exposed = 0, shared = 0, overhead = 0;
  int64_t kernelCount = 0;
  /// The host-task thread: when it is free, its kernels' seconds, what
  /// they cost the compute thread, and what it waited for them.
  double host = 0, hostKernels = 0, hostShared = 0, hostWaits = 0;
  /// When the last task writing each argument of the step and apply
  /// functions ends (the driver passes both the same buffers), by argument
  /// number. A task's other outputs are waited for in its own function.
  DenseMap<unsigned, double> argumentWritten;

  /// A new step (the driver has synchronised): the compute and
  /// communication clocks restart at 0 and the sums at nothing; the host
  /// thread's pending work keeps its place relative to them.
  void startStep() {
    double now = std::max(compute, comm);
    Clocks next;
    next.host = std::max(0.0, host - now);
    for (auto [argument, end] : argumentWritten)
      next.argumentWritten[argument] = std::max(0.0, end - now);
    *this = std::move(next);
  }
};

/// "matmul" for the kernel an op is.
std::string kernelName(Operation *op) {
  StringRef name = op->getName().getStringRef();
  name.consume_front("zrt.");
  return name.str();
}

/// A started collective until its wait.
struct InFlight {
  size_t index;                // into the plan
  double kernelSecondsAtStart; // waits not included
  int64_t kernelsAtStart;
  double end; // when the communication thread finishes it
};

/// One run of `body`: its collectives appended to `out` with their plan.
void replay(func::FuncOp body, StringRef function, int64_t microBatch,
            const zrt::GroupSizes &groups, const TimeModel &model,
            Clocks &clocks, std::vector<PlannedCollective> &out) {
  SmallVector<Operation *> ops;
  for (Operation &op : body.getBody().front())
    ops.push_back(&op);
  // Allocations take time (they zero-fill) but are not what a reader
  // looks for around a collective.
  auto isKernel = [&](Operation *op) {
    return !isa<zrt::AllocOp>(op) && model.kernelSeconds(op) > 0;
  };
  auto lastKernelBefore = [&](size_t position) {
    for (size_t i = position; i-- > 0;)
      if (isKernel(ops[i]))
        return kernelName(ops[i]);
    return std::string("(entry)");
  };
  auto firstKernelAfter = [&](size_t position) {
    for (size_t i = position + 1; i < ops.size(); ++i)
      if (isKernel(ops[i]))
        return kernelName(ops[i]);
    return std::string("(exit)");
  };
  DenseMap<Value, InFlight> inFlight; // by handle
  // The open host task's clock, and when the tasks writing this function's
  // other buffers end.
  std::optional<double> task;
  DenseMap<Value, double> written;
  auto taskWrites = [&](Value buffer) -> std::optional<double> {
    if (auto argument = dyn_cast<BlockArgument>(buffer)) {
      auto it = clocks.argumentWritten.find(argument.getArgNumber());
      if (it == clocks.argumentWritten.end())
        return std::nullopt;
      double end = it->second;
      clocks.argumentWritten.erase(it);
      return end;
    }
    auto it = written.find(buffer);
    if (it == written.end())
      return std::nullopt;
    double end = it->second;
    written.erase(it);
    return end;
  };
  auto waitForHost = [&](double end) {
    clocks.hostWaits += std::max(0.0, end - clocks.compute);
    clocks.compute = std::max(clocks.compute, end);
  };
  for (auto [position, op] : llvm::enumerate(ops)) {
    // Host tasks (zero-overlap-offload) run in order on the host-task
    // thread, from when the compute thread queues them; the compute thread
    // pays (1 - commOverlap) of them, as of a collective.
    if (isa<zrt::HostTaskBeginOp>(op)) {
      task = std::max(clocks.compute, clocks.host);
      continue;
    }
    if (auto end = dyn_cast<zrt::HostTaskEndOp>(op)) {
      if (!task)
        continue;
      clocks.host = *task;
      if (auto argument = dyn_cast<BlockArgument>(end.getWrites()))
        clocks.argumentWritten[argument.getArgNumber()] = *task;
      else
        written[end.getWrites()] = *task;
      task.reset();
      continue;
    }
    if (task) {
      double seconds = model.kernelSeconds(op);
      *task += seconds;
      clocks.hostKernels += seconds;
      double shared = (1 - model.commOverlap) * seconds;
      clocks.compute += shared;
      clocks.hostShared += shared;
      continue;
    }
    if (auto wait = dyn_cast<zrt::HostWaitOp>(op)) {
      if (std::optional<double> end = taskWrites(wait.getBuffer()))
        waitForHost(*end);
      continue;
    }
    if (isa<zrt::HostWaitAllOp>(op)) {
      waitForHost(clocks.host);
      clocks.argumentWritten.clear();
      written.clear();
      continue;
    }
    if (auto collective = dyn_cast<zrt::CollectiveOpInterface>(op)) {
      PlannedCollective planned;
      planned.sequence = int64_t(out.size()) + 1;
      planned.kind = collective.getCollectiveKind();
      // The ranks of its group share the ring.
      int64_t worldSize = groups.sizeOf(collective);
      planned.tensorBytes = (zrt::getCollectiveInfo(planned.kind).sharded()
                                 ? collective.getShardElements() * worldSize
                                 : collective.getWholeElements()) *
                            collective.getElementBytes();
      planned.label = collective.getLabel().value_or("").str();
      planned.function = function.str();
      planned.microBatch = microBatch;
      planned.blocking = !collective.isAsync();
      planned.startPosition = int64_t(position);
      planned.kernelBeforeStart = lastKernelBefore(position);
      planned.transfer = model.collectiveSeconds(
          planned.kind, planned.tensorBytes, worldSize,
          model.spansNodes(collective.getGroup(), groups));
      // The start runs on the compute thread before the transfer can begin.
      clocks.compute += model.collectiveStartSeconds;
      clocks.overhead += model.collectiveStartSeconds;
      // The communication thread runs collectives one at a time, in the
      // order they were started.
      double begin = std::max(clocks.compute, clocks.comm);
      planned.queued = begin - clocks.compute;
      clocks.comm = begin + planned.transfer;
      if (planned.blocking) {
        planned.waitPosition = planned.startPosition;
        planned.kernelAfterWait = firstKernelAfter(position);
        planned.exposed = clocks.comm - clocks.compute;
        clocks.exposed += planned.exposed;
        clocks.compute = clocks.comm;
      } else {
        inFlight[op->getResult(0)] = {out.size(), clocks.kernels,
                                      clocks.kernelCount, clocks.comm};
        // The part of the transfer that does not overlap takes the
        // compute thread's core (a CPU rank of one core).
        double shared = (1 - model.commOverlap) * planned.transfer;
        clocks.compute += shared;
        clocks.shared += shared;
      }
      out.push_back(std::move(planned));
      continue;
    }
    if (auto wait = dyn_cast<zrt::WaitOp>(op)) {
      auto it = inFlight.find(wait.getHandle());
      if (it == inFlight.end())
        continue;
      InFlight started = it->second;
      inFlight.erase(it);
      PlannedCollective &planned = out[started.index];
      planned.waitPosition = int64_t(position);
      planned.kernelAfterWait = firstKernelAfter(position);
      planned.kernelsBetween = clocks.kernelCount - started.kernelsAtStart;
      planned.computeBetween = clocks.kernels - started.kernelSecondsAtStart;
      planned.exposed = std::max(0.0, started.end - clocks.compute);
      clocks.exposed += planned.exposed;
      clocks.compute = std::max(clocks.compute, started.end);
      continue;
    }
    double seconds = model.kernelSeconds(op);
    clocks.compute += seconds;
    clocks.kernels += seconds;
    if (isKernel(op)) {
      ++clocks.kernelCount;
      clocks.compute += model.kernelOverheadSeconds;
      clocks.overhead += model.kernelOverheadSeconds;
    }
  }
}

} // namespace

FailureOr<SchedulePrediction>
predictSchedule(ModuleOp module, const TimeModel &model, StringRef passName) {
  auto describe = module.lookupSymbol<func::FuncOp>("zero_program_describe");
  auto step = module.lookupSymbol<func::FuncOp>("zero_program_step");
  auto apply = module.lookupSymbol<func::FuncOp>("zero_program_apply");
  if (!describe || !step || step.isExternal())
    return module.emitError() << passName
                              << ": expected the zrt program (run "
                                 "zero-lower-to-zrt first)";
  zrt::GroupSizes groups = zrt::GroupSizes::declaredIn(describe);
  int64_t microBatches = 1;
  describe.walk([&](zrt::DeclareMicroBatchesOp micro) {
    microBatches = micro.getMicroBatches();
  });
  SchedulePrediction prediction;
  Clocks clocks;
  auto replayStep = [&](std::vector<PlannedCollective> &out) {
    for (int64_t micro = 1; micro <= microBatches; ++micro)
      replay(step, "step", micro, groups, model, clocks, out);
    if (apply && !apply.isExternal())
      replay(apply, "apply", 0, groups, model, clocks, out);
  };
  // A first step, for the host tasks the predicted one waits for.
  std::vector<PlannedCollective> first;
  replayStep(first);
  clocks.startStep();
  replayStep(prediction.collectives);
  // The driver waits for every collective at the end of the step (the
  // program waits for its own, so the queue is empty by then).
  prediction.stepSeconds = std::max(clocks.compute, clocks.comm);
  prediction.computeSeconds = clocks.kernels;
  prediction.exposedSeconds = clocks.exposed;
  prediction.sharedSeconds = clocks.shared;
  prediction.overheadSeconds = clocks.overhead;
  prediction.hostTaskSeconds = clocks.hostKernels;
  prediction.hostSharedSeconds = clocks.hostShared;
  prediction.hostWaitSeconds = clocks.hostWaits;
  return prediction;
}

llvm::Expected<TimeModel> readCalibration(StringRef path) {
  auto fail = [&](const Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--calibration=" + path + ": " + why);
  };
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail("cannot read it (" + buffer.getError().message() + ")");
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail("not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return fail("expected a JSON object, as the runtime's --calibrate "
                "writes");
  TimeModel model;
  for (auto [key, field] :
       {std::pair<StringRef, double *>{"gemm_flops", &model.computeFlops},
        {"memory_bandwidth", &model.memoryBandwidth},
        {"link_bandwidth", &model.linkBandwidth},
        {"link_latency", &model.linkLatency}}) {
    std::optional<double> value = object->getNumber(key);
    if (!value)
      return fail(llvm::formatv("no number \"{0}\"", key).str());
    bool isLatency = key == "link_latency";
    if (!(*value > 0 || (isLatency && *value == 0)) || !std::isfinite(*value))
      return fail(llvm::formatv("\"{0}\" must be a positive number, got {1}",
                                key, *value)
                      .str());
    *field = *value;
  }
  // Written since the program's steps are timed; older files mean none.
  for (auto [key, field] :
       {std::pair<StringRef, double *>{"collective_start_seconds",
                                       &model.collectiveStartSeconds},
        {"kernel_overhead_seconds", &model.kernelOverheadSeconds}}) {
    const llvm::json::Value *value = object->get(key);
    if (!value)
      continue;
    std::optional<double> number = value->getAsNumber();
    if (!number || !(*number >= 0) || !std::isfinite(*number))
      return fail(
          llvm::formatv("\"{0}\" must be zero or more seconds", key).str());
    *field = *number;
  }
  // Written since the overlap was measured; older files mean full overlap.
  if (const llvm::json::Value *overlap = object->get("comm_overlap")) {
    std::optional<double> value = overlap->getAsNumber();
    if (!value || !(*value >= -1 && *value <= 1))
      return fail("\"comm_overlap\" must be a number from -1 to 1");
    model.commOverlap = *value;
  }
  return model;
}

std::string TimeModelOptions::text() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "compute-rate=" << computeRate
     << " memory-bandwidth=" << memoryBandwidth
     << " link-bandwidth=" << linkBandwidth << " link-latency=" << linkLatency;
  if (!calibration.empty())
    os << " calibration=" << calibration;
  if (ranksPerNode != 0)
    os << " ranks-per-node=" << ranksPerNode
       << " inter-node-bandwidth=" << interNodeBandwidth
       << " inter-node-latency=" << interNodeLatency;
  if (hostMemoryBandwidth != 0 || hostLinkBandwidth != 0)
    os << " host-memory-bandwidth=" << hostMemoryBandwidth
       << " host-link-bandwidth=" << hostLinkBandwidth;
  return text;
}

FailureOr<TimeModel> timeModelFromOptions(Operation *op, StringRef passName,
                                          const TimeModelOptions &flags) {
  TimeModel model;
  if (!flags.calibration.empty()) {
    llvm::Expected<TimeModel> calibrated = readCalibration(flags.calibration);
    if (!calibrated)
      return op->emitError()
             << passName << ": " << llvm::toString(calibrated.takeError());
    model = *calibrated;
  } else {
    for (auto [name, value] :
         {std::pair<StringRef, double>{"compute-rate", flags.computeRate},
          {"memory-bandwidth", flags.memoryBandwidth},
          {"link-bandwidth", flags.linkBandwidth}}) {
      if (!(value > 0) || !std::isfinite(value))
        return op->emitError() << passName << ": " << name
                               << " must be a positive number, got " << value;
    }
    if (!(flags.linkLatency >= 0) || !std::isfinite(flags.linkLatency))
      return op->emitError() << passName
                             << ": link-latency must be zero or more "
                                "microseconds, got "
                             << flags.linkLatency;
    model.computeFlops = flags.computeRate * 1e9;
    model.memoryBandwidth = flags.memoryBandwidth * 1e9;
    model.linkBandwidth = flags.linkBandwidth * 1e9;
    model.linkLatency = flags.linkLatency * 1e-6;
  }
  if (flags.ranksPerNode < 0 || !(flags.interNodeBandwidth >= 0) ||
      !std::isfinite(flags.interNodeBandwidth) ||
      !(flags.interNodeLatency >= 0) || !std::isfinite(flags.interNodeLatency))
    return op->emitError() << passName
                           << ": ranks-per-node, inter-node-bandwidth and "
                              "inter-node-latency must be zero or more";
  if (!(flags.hostMemoryBandwidth >= 0) ||
      !std::isfinite(flags.hostMemoryBandwidth) ||
      !(flags.hostLinkBandwidth >= 0) ||
      !std::isfinite(flags.hostLinkBandwidth))
    return op->emitError() << passName
                           << ": host-memory-bandwidth and host-link-bandwidth "
                              "must be zero or more";
  // The host's: given on top of a calibration too (--calibrate measures
  // the CPU backend, whose host is the device).
  model.hostMemoryBandwidth = flags.hostMemoryBandwidth * 1e9;
  model.hostLinkBandwidth = flags.hostLinkBandwidth * 1e9;
  // Across nodes: the link's own figures unless given.
  model.ranksPerNode = flags.ranksPerNode;
  model.interNodeBandwidth = flags.interNodeBandwidth > 0
                                 ? flags.interNodeBandwidth * 1e9
                                 : model.linkBandwidth;
  model.interNodeLatency = flags.interNodeLatency > 0
                               ? flags.interNodeLatency * 1e-6
                               : model.linkLatency;
  return model;
}

std::string formatSeconds(double seconds) {
  if (seconds <= 0)
    return "0";
  if (seconds >= 1)
    return llvm::formatv("{0:F2} s", seconds).str();
  if (seconds >= 1e-3)
    return llvm::formatv("{0:F2} ms", seconds * 1e3).str();
  return llvm::formatv("{0:F1} us", seconds * 1e6).str();
}

} // namespace zero
