//===- exact_kernels.cuh - Exact (ZRT_EXACT) sum kernels -------*- CUDA -*-===//
//
// The device code of exact.cu (whose comment describes the kernels), in a
// header so that the host emulator of runtime/cuda/tests/emulation compiles
// it too (see device_math.cuh). The arithmetic is core/exact.h's, the same
// as the CPU backend's.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_EXACT_KERNELS_CUH
#define ZRT_CUDA_EXACT_KERNELS_CUH

#include "core/exact.h"
#include "cuda/device_math.cuh"

namespace zrt::cuda::fixed {

constexpr int kExactThreads = 256;
constexpr int64_t kMaxExactBlocks = 256;

/// sumSquaresExactPartialKernel's grid. Any grid gives the same bits (the
/// sums are exact); this one bounds the partials.
inline int64_t sumSquaresExactBlocks(int64_t n) {
  return std::clamp<int64_t>(ceilDiv(n, (int64_t)kExactThreads * 4), 1,
                             kMaxExactBlocks);
}

template <typename T>
__global__ void accumulateExactKernel(const T *x, Exact *acc, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    acc[i] = exactAdd(acc[i], toExact((double)load(x, i)));
}

/// The exact sum of the block's `sum`s, in thread 0 (a tree in shared
/// memory; blockDim.x is kExactThreads).
__device__ inline Exact blockExactSum(Exact sum) {
  __shared__ Exact sums[kExactThreads];
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kExactThreads / 2; half > 0; half /= 2) {
    if ((int)threadIdx.x < half)
      sums[threadIdx.x] = exactAdd(sums[threadIdx.x], sums[threadIdx.x + half]);
    __syncthreads();
  }
  return sums[0];
}

/// partials[block] = the exact sum of the block's grid-stride share of
/// exact(x[i]^2), each square computed in double (exact for f32 and bf16).
template <typename T>
__global__ void __launch_bounds__(kExactThreads)
    sumSquaresExactPartialKernel(const T *x, int64_t n, Exact *partials) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  Exact sum = 0;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double v = load(x, i);
    sum = exactAdd(sum, toExact(v * v));
  }
  sum = blockExactSum(sum);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = sum;
}

/// acc[0] += the exact sum of partials[0..count); one block.
__global__ void __launch_bounds__(kExactThreads)
    sumSquaresExactFinalKernel(const Exact *partials, int64_t count,
                               Exact *acc) {
  Exact sum = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
    sum = exactAdd(sum, partials[i]);
  sum = blockExactSum(sum);
  if (threadIdx.x == 0)
    acc[0] = exactAdd(acc[0], sum);
}

__global__ void fromExactKernel(const Exact *in, float *out, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    out[i] = zrt::fromExact(in[i]);
}

} // namespace zrt::cuda::fixed

#endif // ZRT_CUDA_EXACT_KERNELS_CUH
