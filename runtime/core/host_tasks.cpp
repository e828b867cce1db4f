//===- host_tasks.cpp - The optimizer's host work off the main thread -----===//

#include "core/host_tasks.h"

#include "core/check.h"

using namespace zrt;

HostTasks::HostTasks(bool threaded) : threaded(threaded) {
  if (threaded)
    worker = std::thread([this] { loop(); });
}

HostTasks::~HostTasks() {
  drain();
  if (!threaded)
    return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_one();
  worker.join();
}

void HostTasks::begin(int64_t deviceFence) {
  if (isOpen)
    fatal("zrt_host_task_begin: a host task is already open (each "
          "zrt_host_task_begin needs its zrt_host_task_end first)");
  isOpen = true;
  openFence = deviceFence;
}

void HostTasks::add(std::function<void()> work) {
  if (!threaded) {
    work();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    queue.emplace_back(++queued, std::move(work));
  }
  wake.notify_one();
}

void HostTasks::end(const void *written) {
  if (!isOpen)
    fatal("zrt_host_task_end: no host task is open (zrt_host_task_begin "
          "first)");
  isOpen = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (threaded)
    writers[written] = queued;
}

int64_t HostTasks::takeWriter(const void *buffer) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = writers.find(buffer);
  if (it == writers.end())
    return 0;
  int64_t ticket = it->second;
  writers.erase(it);
  return ticket;
}

void HostTasks::drain() {
  int64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mutex);
    ticket = queued;
    writers.clear();
  }
  waitFor(ticket);
}

bool HostTasks::idle() {
  std::lock_guard<std::mutex> lock(mutex);
  return completed >= queued;
}

void HostTasks::waitFor(int64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return completed >= ticket; });
}

void HostTasks::loop() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    wake.wait(lock, [&] { return stopping || !queue.empty(); });
    if (queue.empty())
      return; // stopping, and nothing left
    auto [ticket, work] = std::move(queue.front());
    queue.pop_front();
    lock.unlock();
    work();
    lock.lock();
    completed = ticket;
    done.notify_all();
  }
}
