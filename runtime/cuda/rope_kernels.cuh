//===- rope_kernels.cuh - RoPE kernel --------------------------*- CUDA -*-===//
//
// The device code of rope.cu (whose comment describes the kernels), in
// a header so that the host emulator of runtime/cuda/tests/emulation
// compiles it too (see device_math.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_ROPE_KERNELS_CUH
#define ZRT_CUDA_ROPE_KERNELS_CUH

#include "cuda/device_math.cuh"

#include <cmath>

namespace zrt::cuda::rotary {

/// Frequencies one launch carries in its parameters.
constexpr int kMaxPairs = 256;

/// inv_freq[first, first + count) of the compiler's table, by value.
struct InvFreqChunk {
  int64_t first = 0, count = 0;
  float v[kMaxPairs];
};

/// Rotates pairs first..first+count of every head of every row.
template <typename T>
__global__ void ropeKernel(const T *x, T *y, int64_t rows, int64_t seq,
                           int64_t heads, int64_t headDim, bool inverse,
                           InvFreqChunk chunk) {
  const int64_t half = headDim / 2;
  const int64_t width = heads * headDim;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
       t < rows * chunk.count; t += stride) {
    const int64_t row = t / chunk.count, j = t % chunk.count;
    const int64_t i = chunk.first + j;
    const float angle = (float)(row % seq) * chunk.v[j];
    float s, c;
    sincosf(angle, &s, &c);
    if (inverse)
      s = -s;
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t base = row * width + h * headDim;
      const float lo = load(x, base + i), hi = load(x, base + i + half);
      store(y, base + i, lo * c - hi * s);
      store(y, base + i + half, hi * c + lo * s);
    }
  }
}

} // namespace zrt::cuda::rotary

#endif // ZRT_CUDA_ROPE_KERNELS_CUH
