//===- watchdog.h - What a rank says when a collective stalls ---*- C++ -*-===//
//
// Every backend bounds the wait for a collective (the CPU's communication
// queue with --collective-timeout, the GPU's synchronisation with
// ZRT_NCCL_TIMEOUT_S). When a wait expires the rank does not know why: a
// peer may be stopped, stuck in a read, dead, or running another collective.
// So before it stops the job it asks: every rank whose watchdog fired sends
// its position (step, collective, kind, bytes) to every other rank, and
// waits a short grace for theirs. Not over MPI: the communication thread is
// still inside the stuck collective, and MPI_THREAD_MULTIPLE, which would
// allow a second thread in, slows every collective down. Each rank listens
// on a TCP port of its own instead, opened with the context.
// Each then prints one line naming itself, its collective and the tensor or
// bucket it moves, the ranks waiting at the same place, the ranks at
// another one, and the ranks that never answered (the ones that did not
// arrive); the ranks that answered wait for each other's lines before the
// first one aborts the job.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_WATCHDOG_H
#define ZRT_CORE_WATCHDOG_H

#include <cstdint>
#include <string>
#include <vector>

struct zrt_context;

namespace zrt {

/// Where a collective stands in the program, recorded when it starts.
struct CollectiveInfo {
  int32_t kind = 0;  // CollectiveKind
  int32_t group = 0; // zrt_group: the ranks it runs over (0: the world)
  /// Bytes of the (padded) tensor it moves.
  int64_t tensorBytes = 0;
  /// The tensor or bucket ("fc1.weight", "bucket of 4: ..."), or what the
  /// driver uses it for; "" when unnamed. A constant of the program.
  const char *label = "";
  /// The training step it belongs to (1, 2, ...; 0 before the first).
  int64_t step = 0;
  /// Started by the validation pass after `step`.
  bool validation = false;
  /// 1, 2, ... among the collectives the program started in the step (or
  /// the validation pass); 0 for the driver's own, between steps.
  int64_t sequence = 0;
};

/// The watchdog's side channel: this rank's TCP listener (-1: none), and
/// every rank's host and port (0: that rank has none).
struct WatchdogChannel {
  int listener = -1;
  std::vector<std::string> hosts;
  std::vector<int> ports;
};

/// Opens this rank's listener and tells every rank where each one is (an
/// MPI_Allgather on ctx->comm: collective, at context creation). A rank
/// that cannot listen only loses the watchdog's answers.
void openWatchdogChannel(zrt_context *ctx);
void closeWatchdogChannel(zrt_context *ctx);

/// "step 4, collective 3: all_gather of 2000 bytes of \"fc1.weight\"": the
/// position ("step 4, collective 3"; "after step 4" for the driver's own;
/// "" when neither is known), then the transfer (which names its group,
/// "... over the shard group", when it is not the world).
std::string describeCollective(const CollectiveInfo &info);
std::string describePosition(const CollectiveInfo &info);
std::string describeTransfer(const CollectiveInfo &info);

/// The watchdog fired on this rank: `stuck` (null: not known) did not
/// complete within `timeoutSeconds` (`knob` names the setting) while
/// `waiter` waited for it, `waitedSeconds` by the clock (much more when
/// this process itself was stopped). Asks the other ranks where they are,
/// prints the one line and stops the job. Safe while another thread is
/// inside MPI.
[[noreturn]] void stopStalledJob(zrt_context *ctx, const char *waiter,
                                 const CollectiveInfo *stuck,
                                 double timeoutSeconds, double waitedSeconds,
                                 const char *knob);

} // namespace zrt

#endif // ZRT_CORE_WATCHDOG_H
