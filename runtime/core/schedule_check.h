//===- schedule_check.h - --check-schedule: the run against the plan -*- C++ -*-===//
//
// The compiler decided where every collective starts and where it is
// waited for, and predicted (zero-predict-schedule's time model) how long
// each waits behind the ones before it on the communication thread and how
// long its wait blocks the compute thread; the program declares that plan
// (zrt_declare_collective_plan). With --check-schedule each rank measures
// the same two quantities for every collective of every step: the time
// from its start to when the communication thread began it, and the time
// its wait blocked. After the last step the ranks compare the median over
// the steps (the first left out as warm-up) with the plan, and rank 0
// names every collective that began or was waited for later than planned
// by more than the tolerance; the run then fails.
//
// Measured on the CPU backend, whose communication thread runs one
// collective at a time in start order, as the plan assumes.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_SCHEDULE_CHECK_H
#define ZRT_CORE_SCHEDULE_CHECK_H

#include "core/watchdog.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

struct zrt_context;

namespace zrt {

/// What the compiler planned for one collective, in nanoseconds.
struct CollectivePlan {
  bool declared = false;
  int64_t queuedNs = 0, transferNs = 0, exposedNs = 0;
};

class ScheduleCheck {
public:
  /// zrt_declare_collective_plan: the plan of collective `sequence`.
  void declare(int64_t sequence, const CollectivePlan &plan);
  bool hasPlan() const { return !plans.empty(); }

  /// The main thread started the collective `info` at `issuedNs` (nowNs(),
  /// taken before handing it over: the communication thread may begin it
  /// before this is called) and got `handle`.
  void started(const CollectiveInfo &info, int64_t handle, int64_t issuedNs);
  /// The communication thread begins it (after any collective before it).
  void began(const CollectiveInfo &info);
  /// The main thread's wait for `handle` blocked `blockedNs`.
  void waited(int64_t handle, int64_t blockedNs);

  /// Collective, after the last step (the queue drained): every rank's
  /// medians to rank 0, which prints the verdict. Returns whether every
  /// collective ran within `toleranceMs` of its plan (the same on every
  /// rank).
  bool verdict(zrt_context *ctx, double toleranceMs) const;

  /// The median of `values` (0 when empty): the typical step's figure,
  /// where a step another process slowed would set a mean.
  static double median(std::vector<double> values);

  static int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

private:
  /// One collective of one step, while it is in flight.
  struct InFlight {
    CollectiveInfo info;
    int64_t startedNs = 0, beganNs = -1;
  };
  /// What one step measured for a collective.
  struct Sample {
    int64_t step, queuedNs, blockedNs;
  };
  std::vector<CollectivePlan> plans; // by sequence - 1
  mutable std::mutex mutex; // the communication thread writes `began`
  std::map<std::pair<int64_t, int64_t>, InFlight> inFlight; // (step, seq)
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> keyOfHandle;
  std::vector<std::vector<Sample>> samples; // by sequence - 1
  std::vector<CollectiveInfo> infos;        // by sequence - 1
};

/// Test hook: ZRT_TEST_DELAY_COLLECTIVE=SEQ:MS makes the communication
/// thread sleep MS milliseconds before it begins collective SEQ of every
/// training step (a late collective that --check-schedule must name).
void injectTestDelay(const CollectiveInfo &info);

} // namespace zrt

#endif // ZRT_CORE_SCHEDULE_CHECK_H
