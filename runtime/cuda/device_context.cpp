//===- device_context.cpp - Streams, memory and errors of a CUDA context --===//
//
// Everything a context on a GPU holds besides its collectives: the compute
// and communication streams, the cuBLASLt handle and GEMM workspace, the slot
// where kernels record data errors, the step scalars (loss, squared gradient norm), the memory of zrt_alloc,
// host transfers, and the synchronisation after each step with its watchdog.
// See device_context.h for why the streams and the allocator are what they
// are.
//
// Every host transfer of the driver goes on the compute stream (never the
// legacy default stream, which does not order against non-blocking
// streams) and is waited for before returning: they happen between steps,
// where simplicity matters more than the microseconds an asynchronous copy
// would save. The optimizer offload's copies inside the step are the
// exception: they are ordered by events instead (see "The offload's
// ordered copies" below).
//
//===----------------------------------------------------------------------===//

#include "cuda/device_context.h"
#include "core/check.h"
#include "core/context.h"
#include "cuda/backend.h"
#include "cuda/cuda_check.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace zrt::cuda {

//===--- Setting up and tearing down --------------------------------------===//

/// ZRT_NCCL_TIMEOUT_S: how long a synchronisation may wait; else the
/// collective watchdog of every backend (--collective-timeout,
/// ZRT_COLLECTIVE_TIMEOUT_S, default 300 s).
static double readTimeout() {
  const char *text = std::getenv("ZRT_NCCL_TIMEOUT_S");
  if (!text || !*text)
    return collectiveTimeoutSeconds();
  char *end = nullptr;
  double seconds = std::strtod(text, &end);
  if (*end || !std::isfinite(seconds) || seconds <= 0)
    fatal("ZRT_NCCL_TIMEOUT_S must be a positive number of seconds, got '%s'",
          text);
  return seconds;
}

CudaRuntime::CudaRuntime(zrt_context *ctx, int gpu) : ctx(ctx), gpu(gpu) {
  timeoutSeconds = readTimeout();
  ZRT_CUDA_CHECK(cudaSetDevice(gpu));
  // The communication stream gets the higher priority: a collective's few
  // blocks should not queue behind a large GEMM's, or the overlap is lost.
  int leastPriority = 0, greatestPriority = 0;
  ZRT_CUDA_CHECK(
      cudaDeviceGetStreamPriorityRange(&leastPriority, &greatestPriority));
  ZRT_CUDA_CHECK(cudaStreamCreateWithPriority(&compute, cudaStreamNonBlocking,
                                              leastPriority));
  ZRT_CUDA_CHECK(cudaStreamCreateWithPriority(&comm, cudaStreamNonBlocking,
                                              greatestPriority));
  ZRT_CUDA_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  ZRT_CUDA_CHECK(
      cudaEventCreateWithFlags(&inputsReady, cudaEventDisableTiming));
  // Keep freed memory in the pool rather than return it to the driver at
  // every synchronisation: the next step allocates the same sizes again.
  cudaMemPool_t pool;
  ZRT_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, gpu));
  uint64_t keepAll = UINT64_MAX;
  ZRT_CUDA_CHECK(
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keepAll));
  size_t freeBytes = 0, totalBytes = 0;
  ZRT_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  deviceBytes = totalBytes;
  ZRT_CUBLAS_CHECK(cublasLtCreate(&lt));
  ZRT_CUDA_CHECK(cudaMalloc(&workspace, kGemmWorkspaceBytes));
  ZRT_CUDA_CHECK(cudaMalloc((void **)&errorSlot, sizeof(DeviceError)));
  ZRT_CUDA_CHECK(
      cudaMalloc((void **)&scalars, kNumStepScalars * sizeof(float)));
  ZRT_CUDA_CHECK(cudaMemsetAsync(errorSlot, 0, sizeof(DeviceError), compute));
  ZRT_CUDA_CHECK(cudaMemsetAsync(scalars, 0, kNumStepScalars * sizeof(float),
                                 compute));
  ZRT_CUDA_CHECK(cudaStreamSynchronize(compute));
  initNccl();
}

CudaRuntime::~CudaRuntime() {
  // destroyContext synchronised and released every buffer before; the frees
  // are stream-ordered, so wait for them before the streams go.
  ZRT_CUDA_CHECK(cudaStreamSynchronize(copy));
  ZRT_CUDA_CHECK(cudaStreamSynchronize(comm));
  ZRT_CUDA_CHECK(cudaStreamSynchronize(compute));
  destroyNccl();
  for (cudaEvent_t event : fences)
    ZRT_CUDA_CHECK(cudaEventDestroy(event));
  for (cudaEvent_t event : uploadEvents)
    ZRT_CUDA_CHECK(cudaEventDestroy(event));
  for (cudaEvent_t event : spareOffloadEvents)
    ZRT_CUDA_CHECK(cudaEventDestroy(event));
  for (const InFlight &collective : inFlight)
    ZRT_CUDA_CHECK(cudaEventDestroy(collective.done));
  for (cudaEvent_t event : spareEvents)
    ZRT_CUDA_CHECK(cudaEventDestroy(event));
  ZRT_CUDA_CHECK(cudaEventDestroy(inputsReady));
  ZRT_CUDA_CHECK(cudaFree(scalars));
  ZRT_CUDA_CHECK(cudaFree(errorSlot));
  ZRT_CUDA_CHECK(cudaFree(workspace));
  if (scratch)
    ZRT_CUDA_CHECK(cudaFree(scratch)); // the compute stream is idle
  ZRT_CUBLAS_CHECK(cublasLtDestroy(lt));
  ZRT_CUDA_CHECK(cudaStreamDestroy(copy));
  ZRT_CUDA_CHECK(cudaStreamDestroy(comm));
  ZRT_CUDA_CHECK(cudaStreamDestroy(compute));
}

std::vector<DeviceRuntime::WorkspacePart> CudaRuntime::workspaceParts() const {
  // The first two are what zero-opt --report predicts (zrt.h).
  return {{"gemm", (int64_t)kGemmWorkspaceBytes},
          {"attention statistics", (int64_t)scratchBytes},
          {"per-call scratch", transientScratchPeak},
          {"slots", (int64_t)(sizeof(DeviceError) + sizeof(float))}};
}

void CudaRuntime::noteTransientScratch(int64_t bytes) {
  transientScratchLive += bytes;
  transientScratchPeak = std::max(transientScratchPeak, transientScratchLive);
}

void *CudaRuntime::kernelScratch(size_t bytes) {
  if (bytes <= scratchBytes)
    return scratch;
  // Stream-ordered: the old buffer is released after the kernels queued
  // before, which are the only ones that used it.
  if (scratch)
    ZRT_CUDA_CHECK(cudaFreeAsync(scratch, compute));
  scratch = nullptr;
  scratchBytes = 0;
  ZRT_CUDA_CHECK(cudaMallocAsync(&scratch, bytes, compute));
  scratchBytes = bytes;
  return scratch;
}

//===--- Memory and host transfers ----------------------------------------===//

void *CudaRuntime::allocate(int64_t bytes) {
  // More than the GPU has is out of memory whatever the allocator would
  // answer (a size near 2^64 may read as an invalid value to it).
  if ((uint64_t)bytes > deviceBytes)
    return nullptr;
  void *ptr = nullptr;
  cudaError_t status = cudaMallocAsync(&ptr, (size_t)bytes, compute);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError(); // not sticky; keep it from a later launch check
    return nullptr;     // zrt_alloc names the size and the category
  }
  if (status != cudaSuccess)
    fatal("zrt_alloc: cudaMallocAsync of %lld bytes failed: %s (%s)",
          (long long)bytes, cudaGetErrorString(status),
          cudaGetErrorName(status));
  // zrt_alloc's contract: zero-filled. On the compute stream, so before any
  // kernel (or collective, which starts behind the compute stream) uses it.
  ZRT_CUDA_CHECK(cudaMemsetAsync(ptr, 0, (size_t)bytes, compute));
  return ptr;
}

void CudaRuntime::release(void *ptr) {
  ZRT_CUDA_CHECK(cudaFreeAsync(ptr, compute));
}

// Pinned, so that the offload copies run at the link's speed and the
// driver's copies of host arguments (init, load, save) work alike.
void *CudaRuntime::allocateHost(int64_t bytes) {
  void *ptr = nullptr;
  cudaError_t status =
      cudaHostAlloc(&ptr, (size_t)bytes, cudaHostAllocPortable);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return nullptr;
  }
  if (status != cudaSuccess)
    fatal("zrt_alloc: cudaHostAlloc of %lld bytes failed: %s (%s)",
          (long long)bytes, cudaGetErrorString(status),
          cudaGetErrorName(status));
  std::memset(ptr, 0, (size_t)bytes);
  return ptr;
}

void CudaRuntime::releaseHost(void *ptr) {
  ZRT_CUDA_CHECK(cudaFreeHost(ptr));
}

// cudaMemcpyDefault: with unified addressing the pointers say where they
// are, so "device" buffers that are host memory under --offload=optimizer
// (the host optimizer's arguments) copy as the driver expects.
void CudaRuntime::copyToDevice(void *dst, const void *src, int64_t bytes) {
  ZRT_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, (size_t)bytes, cudaMemcpyDefault, compute));
  waitForStream(compute);
}

void CudaRuntime::copyToHost(void *dst, const void *src, int64_t bytes) {
  ZRT_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, (size_t)bytes, cudaMemcpyDefault, compute));
  waitForStream(compute);
}

//===--- Waiting for the GPU, and events ----------------------------------===//

/// Polls `query` (cudaStreamQuery or cudaEventQuery) until it succeeds,
/// calling `between(seconds waited)` after each miss; any error other than
/// not-ready stops the job, saying the GPU failed while `doing`. Spins
/// briefly (most waits are short), then polls every 100 us.
template <typename Query, typename Between>
static void pollUntilDone(Query query, const char *doing, Between between) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  for (int64_t polls = 0;; ++polls) {
    cudaError_t status = query();
    if (status == cudaSuccess)
      return;
    if (status != cudaErrorNotReady)
      fatal("the GPU failed while %s: %s (%s)", doing,
            cudaGetErrorString(status), cudaGetErrorName(status));
    between(std::chrono::duration<double>(Clock::now() - start).count());
    if (polls < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

cudaEvent_t takeEvent(std::vector<cudaEvent_t> &spare) {
  if (spare.empty()) {
    cudaEvent_t event;
    ZRT_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return event;
  }
  cudaEvent_t event = spare.back();
  spare.pop_back();
  return event;
}

//===--- The offload's ordered copies (host tasks) ------------------------===//
//
// A host task (core/host_tasks.h) runs on the host-task thread, which calls
// waitForFence and uploadAfter; everything else here is the main thread's.
// The CUDA runtime is thread-safe, but the current device is per thread:
// the host-task thread selects this context's GPU at each call.

void CudaRuntime::copyToHostQueued(void *dst, const void *src,
                                   int64_t bytes) {
  // On the compute stream: after the kernels that wrote `src`, and before
  // any that reuse its memory (a free, an arena's next tenant).
  ZRT_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, (size_t)bytes, cudaMemcpyDefault, compute));
}

cudaEvent_t CudaRuntime::fenceEvent(int64_t fence) {
  if (fence < 1 || fence > (int64_t)fences.size())
    fatal("host task: unknown device fence %lld (fences are valid until "
          "zrt_host_wait_all)",
          (long long)fence);
  return fences[fence - 1];
}

int64_t CudaRuntime::fence() {
  std::lock_guard<std::mutex> lock(offloadMutex);
  cudaEvent_t event = takeEvent(spareOffloadEvents);
  ZRT_CUDA_CHECK(cudaEventRecord(event, compute));
  fences.push_back(event);
  return (int64_t)fences.size();
}

void CudaRuntime::waitForFence(int64_t fence) {
  if (!fence)
    return;
  cudaEvent_t event;
  {
    std::lock_guard<std::mutex> lock(offloadMutex);
    event = fenceEvent(fence);
  }
  ZRT_CUDA_CHECK(cudaSetDevice(gpu));
  // Without NCCL's progress check (the main thread's): a GPU that never
  // gets there stops the job after the timeout, the main thread's watchdog
  // being the likelier to speak first.
  pollUntilDone(
      [&] { return cudaEventQuery(event); },
      "a host task waited for the gradient's copy to the host",
      [&](double seconds) {
        if (seconds > timeoutSeconds)
          fatal("a host task (--offload=optimizer) waited %.0f s for the "
                "GPU's copies to the host, which did not complete",
                seconds);
      });
}

void CudaRuntime::uploadAfter(int64_t fence, void *dst, const void *src,
                              int64_t bytes) {
  ZRT_CUDA_CHECK(cudaSetDevice(gpu));
  std::lock_guard<std::mutex> lock(offloadMutex);
  // The fence orders the upload after the kernels that last read `dst`.
  if (fence)
    ZRT_CUDA_CHECK(cudaStreamWaitEvent(copy, fenceEvent(fence), 0));
  ZRT_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, (size_t)bytes, cudaMemcpyDefault, copy));
  cudaEvent_t done = takeEvent(spareOffloadEvents);
  ZRT_CUDA_CHECK(cudaEventRecord(done, copy));
  uploadEvents.push_back(done);
  uploads[dst] = done; // the copy stream is in order: the last one covers
}

void CudaRuntime::orderAfterUpload(const void *dst) {
  std::lock_guard<std::mutex> lock(offloadMutex);
  auto it = uploads.find(dst);
  if (it == uploads.end())
    return;
  ZRT_CUDA_CHECK(cudaStreamWaitEvent(compute, it->second, 0));
  uploads.erase(it);
}

void CudaRuntime::finishUploads() {
  waitForStream(copy);
  // No task is pending, so every fence was waited for on the host and
  // every upload has arrived: the events may be recorded again.
  std::lock_guard<std::mutex> lock(offloadMutex);
  spareOffloadEvents.insert(spareOffloadEvents.end(), fences.begin(),
                            fences.end());
  spareOffloadEvents.insert(spareOffloadEvents.end(), uploadEvents.begin(),
                            uploadEvents.end());
  fences.clear();
  uploadEvents.clear();
  uploads.clear();
}

//===--- Synchronisation, the watchdog, data errors -----------------------===//

void CudaRuntime::waitForStream(cudaStream_t stream) {
  pollUntilDone([&] { return cudaStreamQuery(stream); },
                "running the program's kernels",
                [&](double seconds) { checkProgress(seconds); });
}

void CudaRuntime::synchronize() {
  waitForStream(comm);
  waitForStream(compute);
  retireWaited();
  checkDeviceErrors();
}

void CudaRuntime::retireWaited() {
  std::deque<InFlight> kept;
  for (const InFlight &collective : inFlight) {
    if (collective.waited)
      spareEvents.push_back(collective.done);
    else
      kept.push_back(collective);
  }
  inFlight.swap(kept);
}

void CudaRuntime::checkDeviceErrors() {
  DeviceError error{};
  ZRT_CUDA_CHECK(cudaMemcpyAsync(&error, errorSlot, sizeof(error),
                                 cudaMemcpyDeviceToHost, compute));
  waitForStream(compute);
  stopOnDeviceError(error);
}

//===--- What kernels.h promises the kernels ------------------------------===//

CudaRuntime &runtimeOf(zrt_context *ctx) {
  auto *runtime = dynamic_cast<CudaRuntime *>(ctx->runtime.get());
  if (!runtime)
    fatal("a CUDA kernel was called on a context that is not on a GPU");
  return *runtime;
}

cudaStream_t computeStream(zrt_context *ctx) { return runtimeOf(ctx).compute; }

void noteScratch(zrt_context *ctx, int64_t bytes) {
  runtimeOf(ctx).noteTransientScratch(bytes);
}

GemmResources gemmResources(zrt_context *ctx) {
  CudaRuntime &runtime = runtimeOf(ctx);
  return {runtime.lt, runtime.workspace, kGemmWorkspaceBytes};
}

void *contextScratch(zrt_context *ctx, size_t bytes) {
  return runtimeOf(ctx).kernelScratch(bytes);
}

DeviceError *deviceErrorSlot(zrt_context *ctx) {
  return runtimeOf(ctx).errorSlot;
}

void checkDeviceErrors(zrt_context *ctx) { runtimeOf(ctx).checkDeviceErrors(); }

//===--- backend.h
//----------------------------------------------------------===//

int visibleGpus(std::string &why) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    why = std::string(cudaGetErrorString(status)) + ", " +
          cudaGetErrorName(status);
    return 0;
  }
  if (count <= 0)
    why = "the CUDA runtime found no device";
  return count;
}

std::string gpuName(int gpu) {
  cudaDeviceProp properties{};
  ZRT_CUDA_CHECK(cudaGetDeviceProperties(&properties, gpu));
  return properties.name;
}

void attach(zrt_context *ctx, int gpu) {
  checkAttachable(ctx, "zrt::cuda::attach");
  ctx->runtime = std::make_unique<CudaRuntime>(ctx, gpu);
  ctx->kernels = &cudaKernels();
}

} // namespace zrt::cuda
