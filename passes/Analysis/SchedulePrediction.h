//===- SchedulePrediction.h - when each collective runs, predicted -*- C++
//-*-===//
//
// The compiler decides where every collective starts and where it is
// waited for; with a time model it can also say how long each will take and
// how much of that the kernels between its start and its wait hide. This
// replays the zrt program on two clocks, the way libzrt runs it: the
// compute thread runs the kernels in order, the communication thread runs
// the collectives one at a time in the order they were started (the CPU's
// CommQueue, a GPU's communication stream). A collective begins when it is
// started or when the one before it ends, whichever is later; a wait blocks
// the compute clock until its collective has ended.
//
// The time model is a roofline per kernel (FLOPs at a compute rate, bytes
// at a memory bandwidth, whichever takes longer) and latency plus bytes at
// a link bandwidth per collective (a ring's bytes on the wire). Its four
// numbers come from zero-opt's flags or from the runtime's --calibrate.
// zero-predict-schedule writes the prediction into the program
// (zrt.declare_collective_plan), zero-report prints it, and the runtime's
// --check-schedule compares each collective's measured start and wait with
// it.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_PASSES_ANALYSIS_SCHEDULEPREDICTION_H
#define ZERO_PASSES_ANALYSIS_SCHEDULEPREDICTION_H

#include "dialects/zrt/ZrtDialect.h"
#include "zero/zrt.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero {

/// The machine, as four numbers (SI units: FLOP/s, bytes/s, seconds).
struct TimeModel {
  double computeFlops = 100e9;   // GEMM FLOP/s of one rank
  double memoryBandwidth = 12e9; // bytes/s a rank streams through memory
  double linkBandwidth = 5e9;    // bytes/s a rank sends to the next
  double linkLatency = 20e-6;    // seconds per collective step
  /// The fraction of a collective's transfer the compute thread does not
  /// pay for while it runs: 1 where the communication has hardware of its
  /// own (a GPU's copy engines and NCCL's SMs, an idle core), 0 where the
  /// communication thread shares the rank's one core with the kernels,
  /// below 0 where running both costs more than running them apart (a
  /// polling communication thread), down to -1. The runtime's --calibrate
  /// measures it; 1 without a calibration. The host-task thread of
  /// --offload=optimizer (zero-overlap-offload) is a second thread of the
  /// rank too, and its tasks cost the compute thread the same fraction.
  double commOverlap = 1;
  /// Seconds the compute thread spends starting a collective (checks,
  /// staging, the hand-over), and outside kernels, starts and waits per
  /// kernel (allocation, bookkeeping, the calls). The runtime's --calibrate
  /// measures both on the program's own steps; 0 without a calibration.
  double collectiveStartSeconds = 0;
  double kernelOverheadSeconds = 0;
  /// Two levels of links: ranks [k n, k n + n) form node k and share the
  /// link above; a collective whose group spans nodes runs at the
  /// inter-node bandwidth and latency (a ring is as fast as its slowest
  /// hop). 0: one level.
  int64_t ranksPerNode = 0;
  double interNodeBandwidth = 5e9, interNodeLatency = 20e-6;
  /// The host of --offload=optimizer: bytes/s its kernels (on_host) stream,
  /// and bytes/s a copy between device and host memory moves. 0: the
  /// device's memory (the CPU backend, where the host is the device and a
  /// copy is a memcpy reading and writing at memoryBandwidth).
  double hostMemoryBandwidth = 0, hostLinkBandwidth = 0;

  /// Seconds of one kernel (any zrt op of the step that is not a
  /// collective, a wait or bookkeeping): max(FLOPs / computeFlops, bytes of
  /// its buffers / memoryBandwidth), the host's bandwidths for host kernels
  /// and offload copies when given.
  double kernelSeconds(mlir::Operation *op) const;
  /// Seconds of one collective of `kind` over a tensor of `tensorBytes`
  /// (padded) among `worldSize` ranks, as a ring runs it: W - 1 steps of
  /// 1/W of the tensor each way (twice for an all-reduce). 0 on one rank.
  double collectiveSeconds(zrt_collective kind, int64_t tensorBytes,
                           int64_t worldSize, bool acrossNodes = false) const;
  /// Whether `group` of a program with these group sizes has ranks on more
  /// than one node.
  bool spansNodes(zrt::Group group, const zrt::GroupSizes &sizes) const;
};

/// FLOPs of a kernel op (0 for the ones bound by memory).
int64_t kernelFlops(mlir::Operation *op);

/// One collective of the step, as planned.
struct PlannedCollective {
  /// 1, 2, ... in start order over the whole step (every micro-batch, then
  /// the apply function): the runtime's sequence number.
  int64_t sequence = 0;
  zrt_collective kind = ZRT_ALL_GATHER;
  int64_t tensorBytes = 0; // the padded tensor, as the runtime counts it
  std::string label;
  /// "step" (with the micro-batch, 1-based) or "apply".
  std::string function;
  int64_t microBatch = 0;
  bool blocking = false;
  /// The op positions in the function (0-based, zrt ops in order) where it
  /// starts and where it is waited for, and the kernels on either side.
  int64_t startPosition = 0, waitPosition = 0;
  std::string kernelBeforeStart, kernelAfterWait;
  /// Kernels between the start and the wait, and their predicted seconds
  /// (what can hide the transfer; waits for other collectives do not).
  int64_t kernelsBetween = 0;
  double computeBetween = 0;
  /// Predicted seconds: from its start to when the communication thread
  /// begins it (behind the collectives started before it), the transfer,
  /// and what its wait blocks the compute thread.
  double queued = 0, transfer = 0, exposed = 0;
};

struct SchedulePrediction {
  std::vector<PlannedCollective> collectives;
  /// Predicted seconds of one step (every micro-batch and the apply), of
  /// its kernels, and of the waits that block it.
  double stepSeconds = 0, computeSeconds = 0, exposedSeconds = 0;
  /// What asynchronous collectives cost the compute thread while they run
  /// ((1 - commOverlap) x their transfer).
  double sharedSeconds = 0;
  /// The collectives' starts and the kernels' overhead outside them.
  double overheadSeconds = 0;
  /// The host tasks' kernels (zero-overlap-offload: AdamW, the cast and
  /// the upload on the host-task thread), what they cost the compute
  /// thread ((1 - commOverlap) x theirs), and what it waits for them
  /// (zrt.host_wait, zrt.host_wait_all).
  double hostTaskSeconds = 0, hostSharedSeconds = 0, hostWaitSeconds = 0;
};

/// Replays the zrt program of `module` (zero-lower-to-zrt's output) on
/// the two clocks, and a third for host tasks. The step predicted is a
/// second step, after one whose host tasks it may still wait for (the
/// steady state: the optimizer's host updates overlap the next forward);
/// without host tasks both steps are alike. Fails with an error on the module,
/// naming `passName`, when it is not a zrt program.
mlir::FailureOr<SchedulePrediction> predictSchedule(mlir::ModuleOp module,
                                                    const TimeModel &model,
                                                    llvm::StringRef passName);

/// The time model of a --calibrate file (JSON written by the runtime:
/// gemm_flops, memory_bandwidth, link_bandwidth, link_latency; SI units;
/// and comm_overlap, 1 when absent),
/// or the error naming the file and the field.
llvm::Expected<TimeModel> readCalibration(llvm::StringRef path);

/// The time model's options in the units people give them (GFLOP/s, GB/s,
/// microseconds), and the one place their defaults are written: the passes
/// that use the time model (Analysis/Passes.td's TimeModelOptions) and the
/// stage pipeline's flags (StageOptions) take their defaults from here.
struct TimeModelOptions {
  double computeRate = 100, memoryBandwidth = 12, linkBandwidth = 5,
         linkLatency = 20;
  std::string calibration;
  int64_t ranksPerNode = 0;
  double interNodeBandwidth = 0, interNodeLatency = 0;
  double hostMemoryBandwidth = 0, hostLinkBandwidth = 0;

  /// Of anything with options of those names: StageOptions, or a pass that
  /// makes this struct its friend (the passes' options are protected).
  template <typename Options> static TimeModelOptions of(const Options &o) {
    return {o.computeRate,        o.memoryBandwidth,  o.linkBandwidth,
            o.linkLatency,        o.calibration,      o.ranksPerNode,
            o.interNodeBandwidth, o.interNodeLatency, o.hostMemoryBandwidth,
            o.hostLinkBandwidth};
  }
  /// Sets the options of those names of a pass's options struct.
  template <typename Options> Options &applyTo(Options &o) const {
    o.computeRate = computeRate;
    o.memoryBandwidth = memoryBandwidth;
    o.linkBandwidth = linkBandwidth;
    o.linkLatency = linkLatency;
    o.calibration = calibration;
    o.ranksPerNode = ranksPerNode;
    o.interNodeBandwidth = interNodeBandwidth;
    o.interNodeLatency = interNodeLatency;
    o.hostMemoryBandwidth = hostMemoryBandwidth;
    o.hostLinkBandwidth = hostLinkBandwidth;
    return o;
  }
  /// As a pass's options text (`compute-rate=100 memory-bandwidth=12 ...`),
  /// the node and host options only where given.
  std::string text() const;
};

/// The time model of the options, or of `calibration` when it names a
/// file (the node and host options apply to either). An error on `op`,
/// naming `passName` and the option, for a value that is not positive or a
/// file that is not a calibration.
mlir::FailureOr<TimeModel> timeModelFromOptions(mlir::Operation *op,
                                                llvm::StringRef passName,
                                                const TimeModelOptions &flags);

/// "12.3 ms", "45 us", "0": seconds as people read a schedule.
std::string formatSeconds(double seconds);

} // namespace zero

#endif // ZERO_PASSES_ANALYSIS_SCHEDULEPREDICTION_H
