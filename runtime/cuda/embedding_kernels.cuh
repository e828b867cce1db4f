//===- embedding_kernels.cuh - Embedding lookup and gradient ---*- CUDA -*-===//
//
// The device code of embedding.cu (whose comment describes the kernels), in
// a header so that the host emulator of runtime/cuda/tests/emulation
// compiles it too (see device_math.cuh). The gradient's sort between
// sortKeysKernel and accumulateRunsKernel is CUB's, launched by
// embedding.cu.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_EMBEDDING_KERNELS_CUH
#define ZRT_CUDA_EMBEDDING_KERNELS_CUH

#include "cuda/device_error.cuh"
#include "cuda/device_math.cuh"

namespace zrt::cuda::embeddings {

constexpr int kGatherThreads = 128;
constexpr int64_t kMaxRowBlocks = 1 << 20;

/// The grid of the row kernels: a block per position (embeddingKernel) or
/// per sorted index (accumulateRunsKernel), strided beyond kMaxRowBlocks.
inline unsigned rowBlocks(int64_t n) {
  return (unsigned)std::min<int64_t>(n, kMaxRowBlocks);
}

/// out[i, :] = table[ids[i], :] in units of U (rowUnits units a row).
template <typename U>
__global__ void embeddingKernel(const int32_t *ids, const U *table, U *out,
                                int64_t n, int64_t vocab, int64_t rowUnits,
                                DeviceError *errors) {
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const int32_t id = ids[i];
    if (id < 0 || id >= vocab) {
      if (threadIdx.x == 0)
        reportDeviceError(errors, kTokenOutOfRange, i, id, vocab);
      continue;
    }
    const U *src = table + (int64_t)id * rowUnits;
    U *dst = out + i * rowUnits;
    for (int64_t u = threadIdx.x; u < rowUnits; u += blockDim.x)
      dst[u] = src[u];
  }
}

/// keys[i] = ids[i], or `sentinel` (reported) when outside [0, vocab);
/// positions[i] = i.
__global__ void sortKeysKernel(const int32_t *ids, uint32_t *keys,
                               int64_t *positions, int64_t n, int64_t vocab,
                               uint32_t sentinel, DeviceError *errors) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int32_t id = ids[i];
    bool valid = id >= 0 && id < vocab;
    if (!valid)
      reportDeviceError(errors, kTokenOutOfRange, i, id, vocab);
    keys[i] = valid ? (uint32_t)id : sentinel;
    positions[i] = i;
  }
}

/// One block per run of equal ids in the sorted order (blocks at other
/// indices return at once): dtable[id, c] = sum over the run of
/// dout[position, c], in position order.
template <typename T>
__global__ void accumulateRunsKernel(const uint32_t *keys,
                                     const int64_t *positions, const T *dout,
                                     T *dtable, int64_t n, int64_t dim,
                                     uint32_t sentinel) {
  for (int64_t k = blockIdx.x; k < n; k += gridDim.x) {
    const uint32_t key = keys[k];
    if (key == sentinel || (k > 0 && keys[k - 1] == key))
      continue;
    T *row = dtable + (int64_t)key * dim;
    for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
      float sum = 0.0f;
      for (int64_t j = k; j < n && keys[j] == key; ++j)
        sum += load(dout, positions[j] * dim + c);
      store(row, c, sum);
    }
  }
}

} // namespace zrt::cuda::embeddings

#endif // ZRT_CUDA_EMBEDDING_KERNELS_CUH
