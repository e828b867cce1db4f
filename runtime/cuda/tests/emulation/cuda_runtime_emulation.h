//===- cuda_runtime_emulation.h - CUDA's host API, emulated ---*- C++ -*-===//
//
// The part of the CUDA runtime API (and of cuBLASLt's and CUB's) that the
// backend's launch code in cuda/*.cu calls, over host memory, so that the
// .cu files themselves (not a copy of their host code) compile as C++ for
// the host emulator of cuda_emulation.h: tests/emulation/include holds
// stand-ins for <cuda_runtime.h>, <cuda_bf16.h>, <cublasLt.h> and CUB's
// radix sort that include this header. Every call runs at once (a stream is
// only a name), which is a legal schedule of stream-ordered work.
//
// What a GPU would refuse, this refuses too, with the same error code: a
// launch of more than 48 KiB of dynamic shared memory without
// cudaFuncSetAttribute's opt-in, an opt-in above an H200's 227 KiB, a block
// of more than 1024 threads, and a cudaMemcpyAsync between overlapping
// ranges (undefined on a GPU). Memory from cudaMallocAsync starts filled
// with 0xff bytes (NaN), so a kernel reading scratch nothing wrote shows.
//
// cuBLASLt is only declared (its handle and status types, for kernels.h):
// the GEMMs are not emulated.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_TESTS_EMULATION_CUDA_RUNTIME_EMULATION_H
#define ZRT_CUDA_TESTS_EMULATION_CUDA_RUNTIME_EMULATION_H

#include "cuda_emulation.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

//===--- Errors, streams, memory ------------------------------------------===//

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
};
typedef struct EmulatedCudaStream *cudaStream_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);
/// The error of the last failed launch since the previous call, then
/// cudaSuccess.
cudaError_t cudaGetLastError();
cudaError_t cudaGetDevice(int *device);

cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t stream);
template <typename T>
cudaError_t cudaMallocAsync(T **ptr, size_t bytes, cudaStream_t stream) {
  return cudaMallocAsync(reinterpret_cast<void **>(ptr), bytes, stream);
}
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dstPitch, const void *src,
                              size_t srcPitch, size_t width, size_t height,
                              cudaMemcpyKind kind,
                              cudaStream_t stream = nullptr);

namespace emu {
/// The dynamic shared memory `kernel` was allowed with
/// cudaFuncSetAttribute (0: none, so 48 KiB).
cudaError_t setMaxDynamicSharedMemory(const void *kernel, int bytes);
size_t maxDynamicSharedMemory(const void *kernel);
/// OS threads the emulator spreads a launch's blocks over.
void setLaunchWorkers(int workers);
int launchWorkers();
/// Records `error` for the next cudaGetLastError.
void setLaunchError(cudaError_t error);
} // namespace emu

template <typename Kernel>
cudaError_t cudaFuncSetAttribute(Kernel *kernel, cudaFuncAttribute attribute,
                                 int value) {
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize)
    return cudaErrorInvalidValue;
  return emu::setMaxDynamicSharedMemory(reinterpret_cast<const void *>(kernel),
                                        value);
}

/// `kernel<<<grid, block, smemBytes, stream>>>(args...)` (cuda/launch.cuh):
/// runs at once on the emulator, or records the launch error a GPU would
/// give for the configuration.
template <typename... Params, typename... Args>
void emulatedLaunch(void (*kernel)(Params...), dim3 grid, dim3 block,
                    size_t smemBytes, Args &&...args) {
  const size_t threads = (size_t)block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || grid.x == 0 || grid.y == 0 ||
      grid.z == 0 ||
      smemBytes >
          emu::maxDynamicSharedMemory(reinterpret_cast<const void *>(kernel))) {
    emu::setLaunchError(cudaErrorInvalidConfiguration);
    return;
  }
  emu::launch(
      grid, block, smemBytes, [&] { kernel(args...); }, emu::launchWorkers());
}

//===--- cuBLASLt (declared only) -----------------------------------------===//

typedef struct EmulatedCublasLt *cublasLtHandle_t;
enum cublasStatus_t { CUBLAS_STATUS_SUCCESS = 0 };
const char *cublasLtGetStatusString(cublasStatus_t status);

//===--- CUB's radix sort -------------------------------------------------===//

namespace cub {
struct DeviceRadixSort {
  /// Stable sort of (key, value) pairs by bits [beginBit, endBit) of the
  /// key; with `temp` null, sets tempBytes (CUB's two-call protocol).
  template <typename Key, typename Value>
  static cudaError_t
  SortPairs(void *temp, size_t &tempBytes, const Key *keysIn, Key *keysOut,
            const Value *valuesIn, Value *valuesOut, int n, int beginBit = 0,
            int endBit = sizeof(Key) * 8, cudaStream_t stream = nullptr);
};
} // namespace cub

template <typename Key, typename Value>
cudaError_t
cub::DeviceRadixSort::SortPairs(void *temp, size_t &tempBytes,
                                const Key *keysIn, Key *keysOut,
                                const Value *valuesIn, Value *valuesOut, int n,
                                int beginBit, int endBit, cudaStream_t) {
  if (!temp) {
    tempBytes = 256; // any size: the caller must allocate and pass it
    return cudaSuccess;
  }
  if (n < 0 || beginBit < 0 || endBit > (int)sizeof(Key) * 8 ||
      beginBit > endBit)
    return cudaErrorInvalidValue;
  using Bits = unsigned long long;
  const Bits mask = endBit - beginBit >= 64
                        ? ~Bits(0)
                        : ((Bits(1) << (endBit - beginBit)) - 1);
  auto digit = [&](int i) { return ((Bits)keysIn[i] >> beginBit) & mask; };
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return digit(a) < digit(b); });
  std::vector<Key> keys(n);
  std::vector<Value> values(n);
  for (int i = 0; i < n; ++i) {
    keys[i] = keysIn[order[i]];
    values[i] = valuesIn[order[i]];
  }
  std::copy(keys.begin(), keys.end(), keysOut);
  std::copy(values.begin(), values.end(), valuesOut);
  return cudaSuccess;
}

#endif // ZRT_CUDA_TESTS_EMULATION_CUDA_RUNTIME_EMULATION_H
