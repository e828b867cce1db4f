//===- softmax_xent_kernels.cuh - Cross-entropy kernels --------*- CUDA -*-===//
//
// The device code of softmax_xent.cu (whose comment describes the kernels), in
// a header so that the host emulator of runtime/cuda/tests/emulation
// compiles it too (see device_math.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_SOFTMAX_XENT_KERNELS_CUH
#define ZRT_CUDA_SOFTMAX_XENT_KERNELS_CUH

#include "cuda/device_error.cuh"
#include "cuda/device_math.cuh"

#include <cmath>

namespace zrt::cuda::xent {

constexpr int kRowThreads = 512;
constexpr int kFinalThreads = 1024;
/// Blocks stride over rows beyond this (never in practice).
constexpr int64_t kMaxRowBlocks = 1 << 20;

/// max and sum_i exp(x_i - max) over some elements of a row.
struct MaxSum {
  float max;
  float sum;
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  float max = fmaxf(a.max, b.max);
  // Both empty: exp(-inf - -inf) would be NaN.
  if (max == -INFINITY)
    return {max, 0.0f};
  return {max, a.sum * expf(a.max - max) + b.sum * expf(b.max - max)};
}

/// The (max, sum) of the whole row, every thread of the block taking part
/// and receiving it. Contains __syncthreads; may be called again right after.
template <typename T> __device__ MaxSum rowMaxSum(const T *row, int64_t cols) {
  MaxSum acc{-INFINITY, 0.0f};
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    float x = load(row, c);
    if (x > acc.max) {
      acc.sum = acc.sum * expf(acc.max - x) + 1.0f;
      acc.max = x;
    } else if (x != -INFINITY) {
      // exp(-inf) adds nothing (and -inf - -inf is NaN); a NaN logit still
      // gets here and makes the sum NaN, as on the CPU.
      acc.sum += expf(x - acc.max);
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    MaxSum other{__shfl_xor_sync(0xffffffffu, acc.max, offset),
                 __shfl_xor_sync(0xffffffffu, acc.sum, offset)};
    acc = combine(acc, other);
  }
  __shared__ MaxSum warpResults[32];
  __shared__ MaxSum result;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0)
    warpResults[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x / 32;
    MaxSum w = lane < warps ? warpResults[lane] : MaxSum{-INFINITY, 0.0f};
    for (int offset = 16; offset > 0; offset /= 2) {
      MaxSum other{__shfl_xor_sync(0xffffffffu, w.max, offset),
                   __shfl_xor_sync(0xffffffffu, w.sum, offset)};
      w = combine(w, other);
    }
    if (lane == 0)
      result = w;
  }
  __syncthreads();
  MaxSum total = result;
  __syncthreads();
  return total;
}

/// The row kernel of all three entry points, one block per row: the row's
/// (max, sum) once, then its loss (logsumexp - logit[label], in double) to
/// rowLoss[r] when `rowLoss` is given, and its gradient
/// (dloss / divisor) * (softmax - onehot) to `dlogits` when that is given.
/// Thread 0 reads the label's logit before any thread writes the row's
/// gradient (dlogits may alias logits). A bad label is recorded and its row
/// skipped (loss 0, gradient untouched).
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    xentKernel(const T *logits, const int32_t *labels, const float *dloss,
               double *rowLoss, T *dlogits, int64_t rows, int64_t cols,
               float divisor, DeviceError *errors) {
  const float scale =
      dlogits ? (float)((double)dloss[0] / (double)divisor) : 0.0f;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int32_t label = labels[r];
    if (label < 0 || label >= cols) {
      // Uniform over the block: every thread skips the row together.
      if (threadIdx.x == 0) {
        reportDeviceError(errors, kLabelOutOfRange, r, label, cols);
        if (rowLoss)
          rowLoss[r] = 0.0;
      }
      continue;
    }
    const T *row = logits + r * cols;
    MaxSum ms = rowMaxSum(row, cols);
    if (rowLoss && threadIdx.x == 0)
      rowLoss[r] =
          (double)ms.max + log((double)ms.sum) - (double)load(row, label);
    if (!dlogits)
      continue;
    __syncthreads();
    T *out = dlogits + r * cols;
    const float invSum = 1.0f / ms.sum;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      float p = expf(load(row, c) - ms.max) * invSum;
      store(out, c, scale * (p - (c == label ? 1.0f : 0.0f)));
    }
  }
}

__global__ void __launch_bounds__(kFinalThreads)
    xentTotalKernel(const double *rowLoss, int64_t rows, float divisor,
                    float *loss) {
  double sum = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x)
    sum += rowLoss[r];
  sum = blockSum(sum);
  if (threadIdx.x == 0)
    loss[0] = (float)(sum / (double)divisor);
}

/// The grid of the row kernels: a block per row, strided beyond
/// kMaxRowBlocks.
inline unsigned rowBlocks(int64_t rows) {
  return (unsigned)std::min<int64_t>(rows, kMaxRowBlocks);
}

} // namespace zrt::cuda::xent

#endif // ZRT_CUDA_SOFTMAX_XENT_KERNELS_CUH
