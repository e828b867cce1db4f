//===- shared_memory.cuh - Dynamic shared memory above 48 KiB --*- CUDA -*-===//
//
// Host code under nvcc, for the launches of kernels that take more dynamic
// shared memory than a kernel gets without asking (the attention kernels).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_SHARED_MEMORY_CUH
#define ZRT_CUDA_SHARED_MEMORY_CUH

#include "cuda/cuda_check.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

namespace zrt::cuda {

/// The dynamic shared memory each kernel (by address) may use on each
/// device, as allowDynamicSharedMemory last set it.
struct SharedMemoryOptIns {
  std::mutex mutex;
  std::map<std::pair<const void *, int>, size_t> bytes;
};
inline SharedMemoryOptIns &sharedMemoryOptIns() {
  static SharedMemoryOptIns optIns;
  return optIns;
}

/// Lets `kernel` launch with `bytes` of dynamic shared memory on the
/// current device. Above 48 KiB a kernel must opt in with
/// cudaFuncSetAttribute, per function and device (beyond the device's
/// opt-in limit that call fails and stops the job); the opt-in is
/// remembered, so only a kernel's first launch on a device pays for the
/// driver call.
template <typename Kernel>
void allowDynamicSharedMemory(Kernel kernel, size_t bytes) {
  constexpr size_t kWithoutOptIn = 48 * 1024;
  if (bytes <= kWithoutOptIn)
    return;
  int device = 0;
  ZRT_CUDA_CHECK(cudaGetDevice(&device));
  SharedMemoryOptIns &optIns = sharedMemoryOptIns();
  std::lock_guard<std::mutex> lock(optIns.mutex);
  size_t &allowed =
      optIns.bytes[{reinterpret_cast<const void *>(kernel), device}];
  if (allowed >= bytes)
    return;
  ZRT_CUDA_CHECK(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  allowed = bytes;
}

} // namespace zrt::cuda

#endif // ZRT_CUDA_SHARED_MEMORY_CUH
