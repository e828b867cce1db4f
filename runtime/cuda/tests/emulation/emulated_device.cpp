//===- emulated_device.cpp - The CUDA backend's kernels on the emulator ---===//
//
// Compiled with ZRT_CUDA_EMULATION, with the .cu files themselves
// (CMakeLists.txt), so cuda/kernels.h declares the functions they define
// here, and this file gives them what device_context.cpp gives them on a GPU.
//
//===----------------------------------------------------------------------===//

#include "emulated_device.h"

#include "core/check.h"
#include "core/context.h"
#include "core/device.h"
#include "cpu/mpi_transport.h"
#include "cuda/kernels.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace zrt::cuda {

namespace {

/// Host memory standing in for device memory, the slot the kernels record
/// data errors in, the context's scratch and an (emulated) cuBLASLt handle.
// The memory is the host's and the kernels are done when they return, so
// the CPU backend's transport (MPI) runs the collectives.
class EmulatedRuntime : public cpu::MpiTransportRuntime {
public:
  explicit EmulatedRuntime(zrt_context *ctx) : MpiTransportRuntime(ctx) {
    cublasLtCreate(&lt);
  }
  ~EmulatedRuntime() override {
    cublasLtDestroy(lt);
    if (scratch)
      cudaFreeAsync(scratch, nullptr);
  }

  /// As CudaRuntime's: stream-ordered memory, zero-filled.
  void *allocate(int64_t bytes) override {
    void *ptr = nullptr;
    if (cudaMallocAsync(&ptr, (size_t)bytes, nullptr) != cudaSuccess)
      return nullptr; // zrt_alloc names the size and the category
    cudaMemsetAsync(ptr, 0, (size_t)bytes, nullptr);
    return ptr;
  }
  void release(void *ptr) override { cudaFreeAsync(ptr, nullptr); }
  void copyToDevice(void *dst, const void *src, int64_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copyToHost(void *dst, const void *src, int64_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  /// Every emulated launch has finished when it returns; what is left is
  /// the copies to the host, which a GPU's synchronisation completes, and
  /// the CUDA runtime's report of a recorded data error.
  void synchronize() override {
    landCopiesToHost(INT64_MAX);
    stopOnDeviceError(errors);
  }

  // The offload's ordered copies, as late as a GPU may run them (see
  // emulated_device.h). The host-task thread and the main thread both call
  // these.
  bool overlapsHostTasks() const override { return true; }
  /// The kernels before it are done (they ran at once), so the bytes are
  /// taken now; they reach `dst` when a later fence is waited for.
  void copyToHostQueued(void *dst, const void *src, int64_t bytes) override {
    std::lock_guard<std::mutex> lock(offloadMutex);
    const char *from = static_cast<const char *>(src);
    copiesToHost.push_back({++copiesQueued, dst,
                            std::vector<char>(from, from + bytes)});
  }
  /// Fence f covers the copies to the host numbered below f.
  int64_t fence() override {
    std::lock_guard<std::mutex> lock(offloadMutex);
    return copiesQueued + 1;
  }
  void waitForFence(int64_t fence) override {
    if (emu::fault != "fence-wait")
      landCopiesToHost(fence - 1);
  }
  /// Kernels run at once, so the reads of `dst` before the fence are done;
  /// the copy itself waits for orderAfterUpload, and reads `src` then.
  void uploadAfter(int64_t, void *dst, const void *src,
                   int64_t bytes) override {
    std::lock_guard<std::mutex> lock(offloadMutex);
    uploads.push_back({dst, src, bytes});
  }
  /// The copy stream runs in order: every upload up to the last one to
  /// `dst` arrives.
  void orderAfterUpload(const void *dst) override {
    std::lock_guard<std::mutex> lock(offloadMutex);
    if (emu::fault == "upload-order")
      return;
    auto last = std::find_if(uploads.rbegin(), uploads.rend(),
                             [&](const Upload &u) { return u.dst == dst; });
    if (last != uploads.rend())
      runUploads(uploads.rend() - last);
  }
  void finishUploads() override {
    landCopiesToHost(INT64_MAX);
    std::lock_guard<std::mutex> lock(offloadMutex);
    runUploads(uploads.size());
  }
  float *stepScalars() override { return scalars; }
  std::vector<WorkspacePart> workspaceParts() const override {
    return {{"attention statistics", (int64_t)scratchBytes}};
  }


  /// CudaRuntime::kernelScratch: grown, never shrunk.
  void *contextScratch(size_t bytes) {
    if (bytes > scratchBytes) {
      if (scratch)
        cudaFreeAsync(scratch, nullptr);
      if (cudaMallocAsync(&scratch, bytes, nullptr) != cudaSuccess)
        fatal("emulated device: out of memory for %zu bytes of scratch", bytes);
      scratchBytes = bytes;
    }
    return scratch;
  }

  DeviceError errors{};
  cublasLtHandle_t lt = nullptr;

private:
  struct CopyToHost {
    int64_t number;
    void *dst;
    std::vector<char> bytes;
  };
  struct Upload {
    void *dst;
    const void *src;
    int64_t bytes;
  };

  /// The copies to the host numbered up to `last` reach their buffers.
  void landCopiesToHost(int64_t last) {
    std::lock_guard<std::mutex> lock(offloadMutex);
    while (!copiesToHost.empty() && copiesToHost.front().number <= last) {
      CopyToHost &copy = copiesToHost.front();
      std::memcpy(copy.dst, copy.bytes.data(), copy.bytes.size());
      copiesToHost.pop_front();
    }
  }
  /// The first `count` pending uploads run (offloadMutex held).
  void runUploads(size_t count) {
    for (size_t i = 0; i < count; ++i)
      std::memcpy(uploads[i].dst, uploads[i].src, uploads[i].bytes);
    uploads.erase(uploads.begin(), uploads.begin() + count);
  }

  std::mutex offloadMutex;
  std::deque<CopyToHost> copiesToHost;
  int64_t copiesQueued = 0;
  std::deque<Upload> uploads;
  float scalars[kNumStepScalars] = {};
  void *scratch = nullptr;
  size_t scratchBytes = 0;
};

EmulatedRuntime &runtimeOf(zrt_context *ctx) {
  auto *runtime = dynamic_cast<EmulatedRuntime *>(ctx->runtime.get());
  if (!runtime)
    fatal("an emulated CUDA kernel was called on a context that is not on "
          "the emulated device");
  return *runtime;
}

} // namespace

//===--- What kernels.h asks of the context -------------------------------===//

cudaStream_t computeStream(zrt_context *ctx) {
  runtimeOf(ctx);
  return nullptr; // every emulated call runs at once
}

GemmResources gemmResources(zrt_context *ctx) {
  // The emulated cuBLASLt needs no workspace; the size is the real one's.
  return {runtimeOf(ctx).lt, nullptr, kGemmWorkspaceBytes};
}

void noteScratch(zrt_context *ctx, int64_t) { runtimeOf(ctx); }

void *contextScratch(zrt_context *ctx, size_t bytes) {
  return runtimeOf(ctx).contextScratch(bytes);
}

DeviceError *deviceErrorSlot(zrt_context *ctx) {
  return &runtimeOf(ctx).errors;
}

void checkDeviceErrors(zrt_context *ctx) {
  stopOnDeviceError(runtimeOf(ctx).errors);
}

//===--- emulated_device.h ------------------------------------------------===//

namespace emulated {

void attach(zrt_context *ctx) {
  checkAttachable(ctx, "zrt::cuda::emulated::attach");
  ctx->runtime = std::make_unique<EmulatedRuntime>(ctx);
  ctx->kernels = &cudaKernels();
}

void setWorkers(int workers) { emu::setLaunchWorkers(workers); }

void setFault(const std::string &fault) { emu::fault = fault; }

DeviceError takeRecordedError(zrt_context *ctx) {
  DeviceError error = runtimeOf(ctx).errors;
  runtimeOf(ctx).errors = DeviceError{};
  return error;
}

} // namespace emulated

} // namespace zrt::cuda
