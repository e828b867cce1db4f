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

constexpr int kMaxHalf = 256;

struct InvFreqTable {
  float v[kMaxHalf];
};

template <typename T>
__global__ void ropeKernel(const T *x, T *y, int64_t rows, int64_t seq,
                           int64_t heads, int64_t headDim, float theta,
                           bool inverse, bool useTable, InvFreqTable table) {
  const int64_t half = headDim / 2;
  const int64_t width = heads * headDim;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
       t < rows * half; t += stride) {
    const int64_t row = t / half, i = t % half;
    const float invFreq =
        useTable ? table.v[i]
                 : 1.0f / powf(theta, (float)(2 * i) / (float)headDim);
    const float angle = (float)(row % seq) * invFreq;
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

/// inv_freq[i] = 1 / theta^(2 i / head_dim) for i < head_dim / 2, on the
/// host with the CPU backend's expression (see rope.cu); useTable is false
/// (the kernel computes it) when the head is wider than 2 * kMaxHalf.
struct InvFreq {
  bool useTable;
  InvFreqTable table;
};
inline InvFreq hostInvFreq(int64_t headDim, float theta) {
  InvFreq f{};
  const int64_t half = headDim / 2;
  f.useTable = half <= kMaxHalf;
  if (f.useTable)
    for (int64_t i = 0; i < half; ++i)
      f.table.v[i] = 1.0f / std::pow(theta, (float)(2 * i) / (float)headDim);
  return f;
}

} // namespace zrt::cuda::rotary

#endif // ZRT_CUDA_ROPE_KERNELS_CUH
