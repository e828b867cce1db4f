//===- comm_queue.h - Collectives in order on a communication thread -*- C++
//-*-===//
//
// zrt_*_start hands a collective to the context's CommQueue and returns at
// once; the queue runs collectives one at a time, in the order started, on
// its own thread, so the main thread's kernels overlap them. zrt_wait blocks
// on a condition variable until the collective of a handle has run.
//
// Threading contract (why MPI_THREAD_SERIALIZED suffices): while a context
// has a communication thread, every collective MPI call of the context is
// made there, and the main thread calls MPI only after drain() (between
// steps: agreement, ledger, checkpoints, the trace, teardown). The queue's
// mutex orders the two threads' MPI calls, so no two ever run at once.
//
// A context made without MPI has no thread: collectives run inline at start
// and waits only check their handle, so single-process tests behave alike.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_COMM_QUEUE_H
#define ZRT_CORE_COMM_QUEUE_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/watchdog.h"

struct zrt_context;

namespace zrt {

class Tracer;

/// One collective as the queue sees it: the work, and what the trace shows.
struct CommOp {
  std::function<void()> run;
  /// Trace label ("all_gather 1.5 MB fc1.weight") and the bytes the ledger
  /// counted; the label is only built when tracing.
  std::string label;
  int64_t countedBytes = 0;
  /// Where to record the execution interval; null when tracing is off.
  Tracer *tracer = nullptr;
  /// What it is and where it stands in the step, for the watchdog's
  /// message (formatted only when the watchdog fires).
  CollectiveInfo info;
};

class CommQueue {
public:
  /// `threaded`: run collectives on a thread of the queue's own (a context
  /// with MPI); otherwise run them inline in start(). `ctx` is the context
  /// whose collectives it runs (the watchdog asks its ranks).
  CommQueue(bool threaded, zrt_context *ctx);
  /// Drains the queue and joins the thread.
  ~CommQueue();
  CommQueue(const CommQueue &) = delete;
  CommQueue &operator=(const CommQueue &) = delete;

  /// Enqueues `op` (runs it, without a thread) and returns its handle: 1,
  /// 2, ... in start order.
  int64_t start(CommOp op);

  /// Blocks until the collective of `handle` has run. An unknown handle or
  /// one already waited for is a fatal error naming it. A wait that blocks
  /// is recorded as "wait" on `tracer`'s compute track (when not null).
  void wait(int64_t handle, Tracer *tracer);

  /// Blocks until every collective started has run (waited for or not), so
  /// that the caller may make MPI calls of its own.
  void drain();

  /// Handles started and never waited for, in order.
  std::vector<int64_t> unwaited() const;

  /// The watchdog: a wait() or drain() that blocks longer than `seconds`
  /// (> 0) stops the job with a message naming the collective that did not
  /// complete and the ranks that did not arrive (stopStalledJob); 0 waits
  /// forever.
  void setTimeout(double seconds) { timeoutSeconds = seconds; }

private:
  /// Blocks on `done` until `ready()`, or stops the job after the timeout,
  /// naming `waiter` and the collective that is still running.
  template <typename Ready>
  void waitUntil(std::unique_lock<std::mutex> &lock, const char *waiter,
                 Ready ready);
  void loop();
  void execute(CommOp &op);

  mutable std::mutex mutex;
  std::condition_variable wake; // the comm thread: work or stop
  std::condition_variable done; // waiters: a collective completed
  std::deque<std::pair<int64_t, CommOp>> pending;
  std::unordered_set<int64_t> notWaited;
  int64_t nextHandle = 1;
  /// Collectives complete in handle order: every handle up to this one has.
  int64_t completed = 0;
  bool stopping = false;
  double timeoutSeconds = 0;
  /// The collective the thread is running (0: none), and what it is.
  int64_t runningHandle = 0;
  CollectiveInfo runningInfo;
  zrt_context *ctx;
  std::thread thread;
};

} // namespace zrt

#endif // ZRT_CORE_COMM_QUEUE_H
