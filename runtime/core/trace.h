//===- trace.h - --trace: a Chrome/Perfetto timeline of the run -*- C++ -*-===//
//
// With --trace=FILE every rank records what its threads did: kernels,
// blocking waits and steps on "compute" (the main thread), collectives on
// "comm" (the communication thread), and under --offload=optimizer the
// host tasks (AdamW, the cast, the upload) on "host tasks". Rank 0 gathers the events after the
// last step and writes one Chrome trace-event JSON file (chrome://tracing,
// ui.perfetto.dev), and prints how much collective time the kernels did not
// hide. Without --trace a context has no Tracer and every hook is one branch
// on a null pointer.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_TRACE_H
#define ZRT_CORE_TRACE_H

#include "core/context.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace zrt {

class Tracer {
public:
  enum Track { Compute = 0, Comm = 1, Host = 2, kNumTracks = 3 };

  /// Collective over ctx's communicator when it has one: the ranks meet at
  /// a barrier and each takes its time zero there, so timestamps of all
  /// ranks share (to within the barrier's skew) one start.
  explicit Tracer(zrt_context *ctx);

  /// Nanoseconds since the common start.
  int64_t now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now() - zero)
        .count();
  }

  /// Records a complete event. Compute events come from the main thread,
  /// comm events from the communication thread only, host events from the
  /// host-task thread (or the main thread, when tasks run inline); each
  /// track has its own vector, read only after the queues are drained. A collective's
  /// event carries the bytes the ledger counted and its zrt_group (args
  /// "counted_bytes" and "group").
  void record(Track track, std::string name, const char *category,
              int64_t begin, int64_t end, int64_t bytes = -1,
              int32_t group = -1);

  /// This rank's events as JSON objects (no enclosing brackets), pid = rank.
  std::string eventsJson(int rank) const;

  /// Collective-execution time on this rank, and the part of it that no
  /// kernel on the compute track overlapped.
  void commExposure(int64_t &exposedNs, int64_t &totalNs) const;

private:
  struct Event {
    std::string name;
    const char *category;
    int64_t begin, end, bytes;
    int32_t group;
  };
  std::chrono::steady_clock::time_point zero;
  std::vector<Event> events[kNumTracks];
};

/// Times one kernel call onto the compute track (or what `category` names
/// on `track`: a host task's piece, a wait for one); free when tracing is
/// off.
class TraceScope {
public:
  TraceScope(zrt_context *ctx, const char *name,
             const char *category = "kernel",
             Tracer::Track track = Tracer::Compute)
      : tracer(ctx ? ctx->tracer.get() : nullptr), name(name),
        category(category), track(track) {
    if (tracer)
      begin = tracer->now();
  }
  ~TraceScope() {
    if (tracer)
      tracer->record(track, name, category, begin, tracer->now());
  }
  TraceScope(const TraceScope &) = delete;
  TraceScope &operator=(const TraceScope &) = delete;

private:
  Tracer *tracer;
  const char *name;
  const char *category;
  Tracer::Track track;
  int64_t begin = 0;
};

/// "all_gather 1.5 MB fc1.weight": the collective, the size of the tensor it
/// moves (decimal units, as the trace viewer's readers expect) and its
/// label, when it has one (the tensor or bucket).
std::string commLabel(const char *kind, int64_t bytes, const char *label);

/// Rank 0 only, before training: "" or why `path` cannot be written (a
/// failed training run should not be the first to find out).
std::string checkTracePath(const std::string &path);

/// Collective, after the last step (the queue drained first): gathers every
/// rank's events to rank 0, which writes `path` through `path`.tmp and a
/// rename, and prints the "comm exposed" line. Returns "" or, on every rank,
/// the same error naming the path.
std::string writeTrace(zrt_context *ctx, const std::string &path);

} // namespace zrt

#endif // ZRT_CORE_TRACE_H
