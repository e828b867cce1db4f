//===- comm_queue.cpp - Collectives in order on a communication thread ----===//

#include "core/comm_queue.h"
#include "core/check.h"
#include "core/schedule_check.h"
#include "core/trace.h"

#include <algorithm>
#include <chrono>
#include <optional>

namespace zrt {

CommQueue::CommQueue(bool threaded, zrt_context *ctx) : ctx(ctx) {
  if (threaded)
    thread = std::thread([this] { loop(); });
}

CommQueue::~CommQueue() {
  if (!thread.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_one();
  thread.join();
}

void CommQueue::execute(CommOp &op) {
  injectTestDelay(op.info);
  if (ctx && ctx->checkSchedule)
    ctx->schedule->began(op.info);
  if (!op.tracer) {
    op.run();
    return;
  }
  int64_t begin = op.tracer->now();
  op.run();
  op.tracer->record(Tracer::Comm, std::move(op.label), "collective", begin,
                    op.tracer->now(), op.countedBytes, op.info.group);
}

int64_t CommQueue::start(CommOp op) {
  int64_t handle;
  {
    std::lock_guard<std::mutex> lock(mutex);
    handle = nextHandle++;
    notWaited.insert(handle);
    if (thread.joinable())
      pending.emplace_back(handle, std::move(op));
  }
  if (thread.joinable()) {
    wake.notify_one();
    return handle;
  }
  // No thread (no MPI): the collective is a local copy, done now.
  execute(op);
  std::lock_guard<std::mutex> lock(mutex);
  completed = handle;
  return handle;
}

template <typename Ready>
void CommQueue::waitUntil(std::unique_lock<std::mutex> &lock,
                          const char *waiter, Ready ready) {
  if (timeoutSeconds <= 0) {
    done.wait(lock, ready);
    return;
  }
  auto begin = std::chrono::steady_clock::now();
  if (done.wait_for(lock, std::chrono::duration<double>(timeoutSeconds), ready))
    return;
  double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  // A rank that stalls (stopped, stuck in a read, deadlocked) leaves every
  // other rank inside the collective: say which, ask the others where they
  // are, and end the job. The thread stays inside MPI meanwhile.
  std::optional<CollectiveInfo> stuck;
  if (runningHandle)
    stuck = runningInfo;
  else if (!pending.empty())
    stuck = pending.front().second.info;
  lock.unlock();
  stopStalledJob(ctx, waiter, stuck ? &*stuck : nullptr, timeoutSeconds, waited,
                 "--collective-timeout / ZRT_COLLECTIVE_TIMEOUT_S");
}

void CommQueue::wait(int64_t handle, Tracer *tracer) {
  std::unique_lock<std::mutex> lock(mutex);
  if (handle <= 0 || handle >= nextHandle) {
    lock.unlock();
    fatal("zrt_wait: unknown handle %lld (handles so far: 1 to %lld)",
          (long long)handle, (long long)nextHandle - 1);
  }
  if (!notWaited.erase(handle)) {
    lock.unlock();
    fatal("zrt_wait: handle %lld was already waited for; each handle is "
          "waited for exactly once",
          (long long)handle);
  }
  if (completed >= handle)
    return;
  int64_t begin = tracer ? tracer->now() : 0;
  waitUntil(lock, "zrt_wait", [&] { return completed >= handle; });
  lock.unlock();
  if (tracer)
    tracer->record(Tracer::Compute, "wait", "wait", begin, tracer->now());
}

void CommQueue::drain() {
  std::unique_lock<std::mutex> lock(mutex);
  waitUntil(lock, "the collectives still running",
            [&] { return completed == nextHandle - 1; });
}

std::vector<int64_t> CommQueue::unwaited() const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<int64_t> handles(notWaited.begin(), notWaited.end());
  std::sort(handles.begin(), handles.end());
  return handles;
}

// An MPI failure in op.run() ends the job from this thread (ZRT_MPI_CHECK ->
// fatal -> MPI_Abort) with the usual message; the main thread is then only
// waiting on a condition variable, not inside MPI.
void CommQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    wake.wait(lock, [&] { return stopping || !pending.empty(); });
    if (pending.empty())
      return; // stopping, and nothing left to run
    auto [handle, op] = std::move(pending.front());
    pending.pop_front();
    runningHandle = handle;
    runningInfo = op.info;
    lock.unlock();
    execute(op);
    lock.lock();
    completed = handle;
    runningHandle = 0;
    done.notify_all();
  }
}

} // namespace zrt
