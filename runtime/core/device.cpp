//===- device.cpp - Choosing the backend; host access to buffers ----------===//
//
// The backends are the ones registered (core/device.h): the CPU always, the
// CUDA backend when CMake built it (cuda/select.cpp), and whatever the
// executable adds. Choosing one is collective: a job whose ranks ran on
// different backends would hang in its first collective (NCCL on some
// ranks, MPI on others), so every backend's select() makes every rank reach
// the same verdict.
//
//===----------------------------------------------------------------------===//

#include "core/device.h"
#include "core/check.h"
#include "core/context.h"
#include "core/convert.h"

#include <cstdlib>
#include <cstring>

namespace zrt {

//===--- Host memory ------------------------------------------------------===//

// The host's own allocator, for backends whose host memory needs nothing
// more (the CPU, the emulated device); a GPU pins it.
void *DeviceRuntime::allocateHost(int64_t bytes) {
  void *ptr = std::aligned_alloc(kBufferAlignment, bytes);
  if (ptr)
    std::memset(ptr, 0, bytes);
  return ptr;
}

void DeviceRuntime::releaseHost(void *ptr) { std::free(ptr); }

//===--- The registry -----------------------------------------------------===//

/// Constructed on first use: backends register from static initialisers,
/// whose order across translation units is unspecified.
static std::vector<Backend> &registry() {
  static std::vector<Backend> backends;
  return backends;
}

static const Backend *findBackend(const std::string &name) {
  for (const Backend &backend : registry())
    if (name == backend.name)
      return &backend;
  return nullptr;
}

void registerBackend(const Backend &backend) {
  for (Backend &known : registry())
    if (std::strcmp(known.name, backend.name) == 0) {
      known = backend;
      return;
    }
  registry().push_back(backend);
}

static bool isBuiltinName(const std::string &name) {
  return name == "auto" || name == "cpu" || name == "cuda";
}

std::vector<std::string> otherBackendNames() {
  std::vector<std::string> names;
  for (const Backend &backend : registry())
    if (!isBuiltinName(backend.name))
      names.push_back(backend.name);
  return names;
}

bool isDeviceName(const std::string &name) {
  return isBuiltinName(name) || findBackend(name);
}

std::string selectDevice(zrt_context *ctx, const std::string &name,
                         std::string &banner) {
  banner = "device: cpu";
  if (name == "auto") {
    const Backend *cuda = findBackend("cuda");
    return cuda ? cuda->select(ctx, /*required=*/false, banner) : "";
  }
  const Backend *backend = findBackend(name);
  if (backend)
    return backend->select(ctx, /*required=*/true, banner);
  // isDeviceName let it through: the one name always accepted that may
  // have no backend.
  return "--device=cuda: this libzrt was built without the CUDA backend "
         "(configure with -DZERO_ENABLE_CUDA=ON where the CUDA toolkit and "
         "NCCL are installed)";
}

/// The host backend's kernels, once a context was put on it: a context
/// with other kernels is on a device.
static const DeviceKernels *hostKernelTable = nullptr;

void attachHostBackend(zrt_context *ctx) {
  for (const Backend &backend : registry())
    if (backend.attachHost) {
      backend.attachHost(ctx);
      hostKernelTable = ctx->kernels;
      return;
    }
  fatal("this libzrt registered no host backend (the CPU backend, "
        "cpu/backend.cpp, is missing from the library)");
}

void checkAttachable(const zrt_context *ctx, const char *who) {
  if (ctx->kernels != hostKernelTable)
    fatal("%s: the context is already on a device", who);
  if (!ctx->allocations.empty())
    fatal("%s: the context already holds %zu host buffers", who,
          ctx->allocations.size());
}

//===--- Host access ------------------------------------------------------===//

void copyToDevice(const zrt_context *ctx, void *dst, const void *src,
                  int64_t bytes) {
  if (bytes > 0)
    ctx->runtime->copyToDevice(dst, src, bytes);
}

void copyToHost(const zrt_context *ctx, void *dst, const void *src,
                int64_t bytes) {
  if (bytes > 0)
    ctx->runtime->copyToHost(dst, src, bytes);
}

void storeFloatsTo(const zrt_context *ctx, int32_t dtype, const float *src,
                   void *dst, int64_t first, int64_t count) {
  if (ctx->runtime->hostAddressable()) {
    storeFloats(dtype, src, dst, first, count);
    return;
  }
  if (count <= 0)
    return;
  int64_t size = dtypeBytes(dtype);
  std::vector<unsigned char> staging(count * size);
  storeFloats(dtype, src, staging.data(), 0, count);
  ctx->runtime->copyToDevice((char *)dst + first * size, staging.data(),
                             count * size);
}

void synchronizeDevice(const zrt_context *ctx) { ctx->runtime->synchronize(); }

HostBuffer::HostBuffer(const zrt_context *ctx, void *buffer, int64_t bytes,
                       bool load)
    : ctx(ctx), buffer(buffer), bytes(bytes), host(buffer) {
  if (ctx->runtime->hostAddressable())
    return;
  copy.resize(bytes > 0 ? bytes : 1);
  host = copy.data();
  if (load)
    copyToHost(ctx, host, buffer, bytes);
}

void HostBuffer::flush() {
  if (!ctx->runtime->hostAddressable())
    copyToDevice(ctx, buffer, host, bytes);
}

} // namespace zrt
