//===- softmax_xent.cu - Softmax cross-entropy forward and backward -------===//
//
// One block per row: rows are long (a GPT-2 vocabulary is 50257 logits), so
// a whole block streams each row, every thread keeping an online (max, sum
// of exp(x - max)) pair over its strided elements (one pass over memory
// instead of two), and the pairs are merged in a fixed shuffle and
// shared-memory order. The forward pass writes each row's loss
// (logsumexp - logit[label], formed in double as the CPU backend does) to
// scratch, and one block adds the rows in a fixed order in double and
// divides by `divisor`: deterministic, no float atomics. The backward pass
// re-reads the row (mostly from L2) to write the gradient; each element is
// read before it is written by the same thread, so dlogits may alias logits
// as on the CPU.
//
// A label outside [0, cols) is recorded with reportDeviceError and its row
// skipped (no loss, gradient row left untouched); the runtime stops the job
// at its next synchronisation.
//
//===----------------------------------------------------------------------===//

#include "cuda/device_math.cuh"

#include <cmath>

namespace zrt::cuda {

namespace {

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

template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    xentRowKernel(const T *logits, const int32_t *labels, double *rowLoss,
                  int64_t rows, int64_t cols, DeviceError *errors) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int32_t label = labels[r];
    if (label < 0 || label >= cols) {
      // Uniform over the block: every thread skips the row together.
      if (threadIdx.x == 0) {
        reportDeviceError(errors, kLabelOutOfRange, r, label, cols);
        rowLoss[r] = 0.0;
      }
      continue;
    }
    const T *row = logits + r * cols;
    MaxSum ms = rowMaxSum(row, cols);
    if (threadIdx.x == 0)
      rowLoss[r] =
          (double)ms.max + log((double)ms.sum) - (double)load(row, label);
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

template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    xentGradKernel(const T *logits, const int32_t *labels, const float *dloss,
                   T *dlogits, int64_t rows, int64_t cols, float divisor,
                   DeviceError *errors) {
  const float scale = (float)((double)dloss[0] / (double)divisor);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int32_t label = labels[r];
    if (label < 0 || label >= cols) {
      if (threadIdx.x == 0)
        reportDeviceError(errors, kLabelOutOfRange, r, label, cols);
      continue;
    }
    const T *row = logits + r * cols;
    T *out = dlogits + r * cols;
    MaxSum ms = rowMaxSum(row, cols);
    const float invSum = 1.0f / ms.sum;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      float p = expf(load(row, c) - ms.max) * invSum;
      store(out, c, scale * (p - (c == label ? 1.0f : 0.0f)));
    }
  }
}

unsigned rowBlocks(int64_t rows) {
  return (unsigned)std::min<int64_t>(rows, kMaxRowBlocks);
}

} // namespace

void softmaxXent(zrt_context *ctx, int32_t dtype, const void *logits,
                 const int32_t *labels, float *loss, int64_t rows, int64_t cols,
                 float divisor) {
  dispatchDtype("zrt_softmax_xent", dtype, [&](auto tag) {
    using T = decltype(tag);
    cudaStream_t stream = computeStream(ctx);
    const int64_t liveRows = std::max<int64_t>(rows, 0);
    Scratch rowLoss(stream, liveRows * sizeof(double));
    if (liveRows > 0) {
      xentRowKernel<T><<<rowBlocks(liveRows), kRowThreads, 0, stream>>>(
          static_cast<const T *>(logits), labels, rowLoss.as<double>(),
          liveRows, cols, deviceErrorSlot(ctx));
      ZRT_CUDA_CHECK_LAUNCH("zrt_softmax_xent");
    }
    // Also for no rows: the loss is then 0 / divisor, as on the CPU.
    xentTotalKernel<<<1, kFinalThreads, 0, stream>>>(rowLoss.as<double>(),
                                                     liveRows, divisor, loss);
    ZRT_CUDA_CHECK_LAUNCH("zrt_softmax_xent");
  });
}

void softmaxXentGrad(zrt_context *ctx, int32_t dtype, const void *logits,
                     const int32_t *labels, const float *dloss, void *dlogits,
                     int64_t rows, int64_t cols, float divisor) {
  dispatchDtype("zrt_softmax_xent_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0)
      return;
    cudaStream_t stream = computeStream(ctx);
    xentGradKernel<T><<<rowBlocks(rows), kRowThreads, 0, stream>>>(
        static_cast<const T *>(logits), labels, dloss,
        static_cast<T *>(dlogits), rows, cols, divisor, deviceErrorSlot(ctx));
    ZRT_CUDA_CHECK_LAUNCH("zrt_softmax_xent_grad");
  });
}

} // namespace zrt::cuda
