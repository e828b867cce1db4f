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

#include <cstring>
#include <memory>

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
  /// the CUDA runtime's report of a recorded data error.
  void synchronize() override { stopOnDeviceError(errors); }
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
