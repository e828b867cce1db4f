//===- cuda_runtime_emulation.cpp - CUDA's host API on the emulator -------===//

#include "cuda_runtime_emulation.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace {

std::mutex mutex;
std::map<const void *, size_t> allowedSharedMemory;
cudaError_t lastError = cudaSuccess;
int workers = 2;

// A kernel may use this much dynamic shared memory without an opt-in, and
// an H200 (sm_90) at most this much with one.
constexpr size_t kWithoutOptIn = 48 * 1024;
constexpr size_t kOptInLimit = 227 * 1024;

// cudaMalloc's alignment.
constexpr std::align_val_t kAlignment{256};

bool overlap(const void *a, const void *b, size_t bytes) {
  const char *x = static_cast<const char *>(a);
  const char *y = static_cast<const char *>(b);
  return bytes > 0 && x < y + bytes && y < x + bytes;
}

} // namespace

const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  case cudaErrorInvalidConfiguration:
    return "invalid configuration argument";
  }
  return "unknown error";
}

const char *cudaGetErrorName(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "cudaSuccess";
  case cudaErrorInvalidValue:
    return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation:
    return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidConfiguration:
    return "cudaErrorInvalidConfiguration";
  }
  return "cudaErrorUnknown";
}

cudaError_t cudaGetLastError() {
  std::lock_guard<std::mutex> lock(mutex);
  cudaError_t error = lastError;
  lastError = cudaSuccess;
  return error;
}

cudaError_t cudaGetDevice(int *device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t) {
  // Exactly `bytes`, so AddressSanitizer sees a kernel running past it.
  *ptr = ::operator new[](bytes > 0 ? bytes : 1, kAlignment, std::nothrow);
  if (!*ptr)
    return cudaErrorMemoryAllocation;
  std::memset(*ptr, 0xff, bytes);
  return cudaSuccess;
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t) {
  ::operator delete[](ptr, kAlignment);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t) {
  if (bytes > 0)
    std::memset(ptr, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind, cudaStream_t) {
  if (overlap(dst, src, bytes))
    return cudaErrorInvalidValue; // undefined on a GPU: refuse it here
  if (bytes > 0)
    std::memcpy(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dstPitch, const void *src,
                              size_t srcPitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream) {
  if (width > dstPitch || width > srcPitch)
    return cudaErrorInvalidValue;
  for (size_t row = 0; row < height; ++row) {
    cudaError_t error = cudaMemcpyAsync(
        static_cast<char *>(dst) + row * dstPitch,
        static_cast<const char *>(src) + row * srcPitch, width, kind, stream);
    if (error != cudaSuccess)
      return error;
  }
  return cudaSuccess;
}

namespace emu {

cudaError_t setMaxDynamicSharedMemory(const void *kernel, int bytes) {
  if (bytes < 0 || (size_t)bytes > kOptInLimit)
    return cudaErrorInvalidValue;
  std::lock_guard<std::mutex> lock(mutex);
  allowedSharedMemory[kernel] = bytes;
  return cudaSuccess;
}

size_t maxDynamicSharedMemory(const void *kernel) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allowedSharedMemory.find(kernel);
  return it == allowedSharedMemory.end() ? kWithoutOptIn
                                         : std::max(kWithoutOptIn, it->second);
}

void setLaunchWorkers(int count) { workers = count > 0 ? count : 1; }
int launchWorkers() { return workers; }

void setLaunchError(cudaError_t error) {
  std::lock_guard<std::mutex> lock(mutex);
  if (lastError == cudaSuccess)
    lastError = error;
}

} // namespace emu
