//===- host_tasks.h - The optimizer's host work off the main thread -*- C++ -*-===//
//
// Under --offload=optimizer the host runs AdamW on each parameter's shard
// and copies the new values up (abi/offload.cpp). zero-overlap-offload
// makes that work a host task per parameter: the program opens a task
// (zrt_host_task_begin), calls the host entries, which are queued here
// rather than run, and closes it naming the device buffer it writes
// (zrt_host_task_end). The tasks run in order on a worker thread while the
// main thread goes on: to the next parameter's update, to the end of the
// step, and into the next step's forward, which waits for a parameter's
// task only where it first reads the parameter (zrt_host_wait). So the
// optimizer overlaps the next forward, as in ZeRO-Offload, without its
// delayed update: every step still uses the parameters of the step before.
//
// The driver drains the queue before it reads or writes the training state
// (checkpoints, validation, --save, teardown).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_HOST_TASKS_H
#define ZRT_CORE_HOST_TASKS_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace zrt {

class HostTasks {
public:
  /// `threaded`: run the work on a thread of its own; otherwise each piece
  /// runs as it is queued (a device backend, whose copies belong to the
  /// main thread's stream, and contexts without MPI).
  explicit HostTasks(bool threaded);
  /// Runs what is queued and joins the thread.
  ~HostTasks();
  HostTasks(const HostTasks &) = delete;
  HostTasks &operator=(const HostTasks &) = delete;

  /// zrt_host_task_begin: the host entries called until end() are queued.
  /// A second begin before end is a fatal error. `deviceFence` is the
  /// device's fence (DeviceRuntime::fence) the task's work comes after, 0
  /// on the CPU.
  void begin(int64_t deviceFence = 0);
  /// Whether a task is open: the host entries call add() instead of
  /// running.
  bool open() const { return isOpen; }
  /// The open task's device fence.
  int64_t fence() const { return openFence; }
  /// Queues one piece of the open task.
  void add(std::function<void()> work);
  /// zrt_host_task_end: closes the task, which writes `written` (a device
  /// buffer) last.
  void end(const void *written);

  /// The ticket of the pending task that writes `buffer` (0: none), which
  /// it forgets: waitFor(ticket) blocks until that task has run.
  int64_t takeWriter(const void *buffer);
  void waitFor(int64_t ticket);
  /// Blocks until every queued piece has run.
  void drain();
  /// Whether every queued piece has run.
  bool idle();

private:
  void loop();

  bool threaded;
  bool isOpen = false;
  int64_t openFence = 0;
  std::mutex mutex;
  std::condition_variable wake, done;
  std::deque<std::pair<int64_t, std::function<void()>>> queue;
  int64_t queued = 0;    // tickets handed out: 1, 2, ...
  int64_t completed = 0; // every ticket up to this one has run
  bool stopping = false;
  /// The last ticket of the task that writes each device buffer.
  std::unordered_map<const void *, int64_t> writers;
  std::thread worker;
};

} // namespace zrt

#endif // ZRT_CORE_HOST_TASKS_H
