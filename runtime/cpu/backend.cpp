//===- backend.cpp - The CPU backend's runtime and registration -----------===//
//
// Host memory is the device: allocations are 64-byte aligned and
// zero-filled as zrt_alloc promises (an arena's block is not filled: every
// buffer placed in it is), host copies are memcpy, and a kernel has
// finished when it returns, so synchronize() has nothing to wait for. The
// core sees hostAddressable() and uses the buffers themselves, so nothing
// here is on the path of a host access but a memcpy the core would make
// anyway.
//
//===----------------------------------------------------------------------===//

#include "core/context.h"
#include "core/device.h"
#include "cpu/kernels.h"
#include "cpu/mpi_transport.h"

#include <cstdlib>
#include <cstring>
#include <memory>

namespace zrt::cpu {

namespace {

class CpuRuntime final : public MpiTransportRuntime {
public:
  using MpiTransportRuntime::MpiTransportRuntime;

  void *allocate(int64_t bytes) override {
    void *ptr = std::aligned_alloc(kBufferAlignment, bytes);
    if (ptr)
      std::memset(ptr, 0, bytes);
    return ptr;
  }
  void *allocateArena(int64_t bytes) override {
    return std::aligned_alloc(kBufferAlignment, bytes);
  }
  void release(void *ptr) override { std::free(ptr); }
  bool hostAddressable() const override { return true; }
  void copyToDevice(void *dst, const void *src, int64_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copyToHost(void *dst, const void *src, int64_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void synchronize() override {}
  float *stepScalars() override { return scalars; }
  std::vector<WorkspacePart> workspaceParts() const override { return {}; }

private:
  float scalars[kNumStepScalars] = {};
};

/// --device=cpu: every context is on the CPU until a device attaches it.
std::string select(zrt_context *, bool, std::string &banner) {
  banner = "device: cpu";
  return "";
}

/// Every context starts on the CPU (core/context.cpp, through the
/// registry's attachHost).
void attach(zrt_context *ctx) {
  ctx->kernels = &cpuKernels();
  ctx->runtime = std::make_unique<CpuRuntime>(ctx);
}

const BackendRegistration registration({"cpu", select, attach});

} // namespace

} // namespace zrt::cpu
