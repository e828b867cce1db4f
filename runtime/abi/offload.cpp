//===- offload.cpp - The optimizer on the host (--offload=optimizer) ------===//
//
// ZeRO-Offload's split: the device runs the forward and backward and keeps
// the parameters; the float32 moments and master weights live in host
// memory (ZRT_MEM_HOST_OPTIMIZER), and the host's CPU runs AdamW on them.
// Each step copies the gradient shard (and the step's scalars) to the host
// and the new parameter shard back.
//
// The copies go through the context's DeviceRuntime (a memcpy on the CPU,
// cudaMemcpyAsync of pinned memory on a GPU), ordered after every kernel
// queued before. The host kernels are the CPU backend's, whatever the
// context's device: on the CPU the step is then exactly the one without
// offload.
//
// Outside a host task every entry is blocking: a host kernel first waits
// for the copies down queued before it, and a copy up returns once done.
//
// Inside a host task (zero-overlap-offload, core/host_tasks.h) the update,
// the cast and the upload are queued for the host-task thread instead: the
// main thread goes on, and where it next reads the parameter
// (zrt_host_wait) it waits for the task and orders the device after the
// upload. On a device the task opens with a fence (DeviceRuntime::fence)
// after the copies down and the parameter's last reads; its first piece
// waits for that fence on the host-task thread, and its upload runs on a
// copy stream behind it, so neither thread blocks the other's queue (see
// core/device.h). The copy is counted when it is queued.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"
#include "core/device.h"
#include "core/host_tasks.h"
#include "core/trace.h"
#include "cpu/kernels.h"

#include <mutex>

using namespace zrt;

namespace {
enum Direction { kToHost = 0, kToDevice = 1 };

/// Counts a copy in the ledger ("offload to_host|to_device").
void countCopy(zrt_context *ctx, Direction direction, int64_t bytes) {
  std::lock_guard<std::mutex> lock(ctx->memoryMutex);
  ctx->ledger.offloadBytes[direction] += bytes;
  ctx->ledger.offloadCalls[direction] += 1;
}

void checkBytes(const char *entry, int64_t bytes) {
  if (bytes < 0)
    fatal("%s: negative size %lld bytes", entry, (long long)bytes);
}

/// Whether a host entry is queued for the host-task thread: inside a host
/// task, on a backend whose copies can be ordered around it.
bool deferred(zrt_context *ctx) {
  return ctx->hostTasks->open() && ctx->runtime->overlapsHostTasks();
}

/// Before a host kernel runs on the main thread: the copies down queued
/// before it have arrived (a device may queue them).
void waitForHostCopies(zrt_context *ctx) {
  DeviceRuntime *runtime = ctx->runtime.get();
  runtime->waitForFence(runtime->fence());
}

/// Queues one piece of the open host task, timed on the trace's host track
/// as `name` of `category`.
template <typename Work>
void queuePiece(zrt_context *ctx, const char *name, const char *category,
                Work work) {
  ctx->hostTasks->add([=] {
    TraceScope trace(ctx, name, category, Tracer::Host);
    work();
  });
}

/// A host kernel: a piece of the open host task, or run here once the
/// copies down it reads have arrived.
template <typename Work>
void runHostKernel(zrt_context *ctx, const char *name, Work work) {
  if (deferred(ctx)) {
    queuePiece(ctx, name, "host task", work);
    return;
  }
  TraceScope trace(ctx, name);
  waitForHostCopies(ctx);
  work();
}
} // namespace

extern "C" void zrt_copy_to_host(zrt_context *ctx, const void *deviceSrc,
                                 void *hostDst, int64_t bytes) {
  checkBytes("zrt_copy_to_host", bytes);
  if (ctx->hostTasks->open())
    fatal("zrt_copy_to_host inside a host task: a task holds the update, "
          "the cast and the upload of one parameter only");
  TraceScope trace(ctx, "copy_to_host");
  ctx->runtime->copyToHostQueued(hostDst, deviceSrc, bytes);
  countCopy(ctx, kToHost, bytes);
}

extern "C" void zrt_copy_to_device(zrt_context *ctx, const void *hostSrc,
                                   void *deviceDst, int64_t bytes) {
  checkBytes("zrt_copy_to_device", bytes);
  countCopy(ctx, kToDevice, bytes);
  if (deferred(ctx)) {
    DeviceRuntime *runtime = ctx->runtime.get();
    int64_t fence = ctx->hostTasks->fence();
    queuePiece(ctx, "copy_to_device", "host task", [=] {
      runtime->uploadAfter(fence, deviceDst, hostSrc, bytes);
    });
    return;
  }
  TraceScope trace(ctx, "copy_to_device");
  ctx->runtime->copyToDevice(deviceDst, hostSrc, bytes);
}

extern "C" void zrt_host_adamw(zrt_context *ctx, int32_t gradDtype,
                               const float *p, const void *g, const float *m,
                               const float *v, float *pOut, float *mOut,
                               float *vOut, int64_t n, const float *lr,
                               const float *step, const float *gradScale,
                               const float *beta1, const float *beta2,
                               const float *eps, const float *weightDecay) {
  runHostKernel(ctx, "host_adamw", [=] {
    cpu::cpuKernels().adamw(ctx, gradDtype, p, g, m, v, pOut, mOut, vOut, n,
                            lr, step, gradScale, beta1, beta2, eps,
                            weightDecay);
  });
}

extern "C" void zrt_host_cast(zrt_context *ctx, int32_t srcDtype,
                              int32_t dstDtype, const void *src, void *dst,
                              int64_t n) {
  runHostKernel(ctx, "host_cast", [=] {
    cpu::cpuKernels().cast(ctx, srcDtype, dstDtype, src, dst, n);
  });
}

extern "C" void zrt_host_task_begin(zrt_context *ctx) {
  if (!ctx->runtime->overlapsHostTasks()) {
    ctx->hostTasks->begin();
    return;
  }
  // The task reads the host copies queued so far and overwrites a buffer
  // the kernels queued so far may read: its first piece waits for them.
  DeviceRuntime *runtime = ctx->runtime.get();
  int64_t fence = runtime->fence();
  ctx->hostTasks->begin(fence);
  if (fence)
    queuePiece(ctx, "wait for copies down", "host_wait",
               [=] { runtime->waitForFence(fence); });
}

extern "C" void zrt_host_task_end(zrt_context *ctx, const void *deviceDst) {
  ctx->hostTasks->end(deviceDst);
}

extern "C" void zrt_host_wait(zrt_context *ctx, const void *deviceBuffer) {
  // The main thread's waits for host tasks are traced in a category of
  // their own: idle time, not a kernel that hides collectives.
  if (int64_t ticket = ctx->hostTasks->takeWriter(deviceBuffer)) {
    TraceScope trace(ctx, "host_wait", "host_wait");
    ctx->hostTasks->waitFor(ticket);
  }
  // Also when the task ran inline: its upload may still be on its way.
  ctx->runtime->orderAfterUpload(deviceBuffer);
}

extern "C" void zrt_host_wait_all(zrt_context *ctx) {
  if (ctx->hostTasks->idle()) {
    ctx->runtime->finishUploads();
    return;
  }
  TraceScope trace(ctx, "host_wait", "host_wait");
  quiesceHostTasks(ctx);
}
