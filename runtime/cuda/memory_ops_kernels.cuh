//===- memory_ops_kernels.cuh - Fill kernel --------------------*- CUDA -*-===//
//
// The device code of memory_ops.cu (whose comment describes the kernels), in
// a header so that the host emulator of runtime/cuda/tests/emulation
// compiles it too (see device_math.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_MEMORY_OPS_KERNELS_CUH
#define ZRT_CUDA_MEMORY_OPS_KERNELS_CUH

#include "core/exact.h"
#include "cuda/device_math.cuh"

namespace zrt::cuda::memory {

template <typename T>
__global__ void fillKernel(T *dst, int64_t n, float value) {
  const T bits = fromFloat<T>(value);
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    dst[i] = bits;
}

/// zrt_fill of ZRT_EXACT: `bits` is exact(value), converted on the host.
__global__ void fillExactKernel(Exact *dst, int64_t n, Exact bits) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    dst[i] = bits;
}

} // namespace zrt::cuda::memory

#endif // ZRT_CUDA_MEMORY_OPS_KERNELS_CUH
