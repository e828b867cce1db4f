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
// as on the CPU. The fused kernel does both from one (max, sum) per row.
//
// One kernel serves the three entry points (xentKernel: a loss, a gradient
// or both from one (max, sum) per row).
//
// A label outside [0, cols) is recorded with reportDeviceError and its row
// skipped (no loss, gradient row left untouched); the runtime stops the job
// at its next synchronisation.
//
// The kernels are in softmax_xent_kernels.cuh, which the host emulator of
// tests/emulation compiles too (zrt-cuda-kernels-emulated); this file holds
// their launches.
//
//===----------------------------------------------------------------------===//

#include "cuda/launch_utils.cuh"
#include "cuda/softmax_xent_kernels.cuh"

#include <cmath>

namespace zrt::cuda {

using namespace xent;

/// The row kernel, writing the row losses to scratch when `loss` is given
/// and the gradient when `dlogits` is, then, for a loss, the fixed-order sum
/// of the rows (also for no rows: the loss is then 0 / divisor, as on the
/// CPU).
template <typename T>
static void launchXent(zrt_context *ctx, const T *logits,
                       const int32_t *labels, const float *dloss, float *loss,
                       T *dlogits, int64_t rows, int64_t cols, float divisor) {
  const int64_t liveRows = std::max<int64_t>(rows, 0);
  if (!loss && liveRows == 0)
    return;
  cudaStream_t stream = computeStream(ctx);
  Scratch rowLoss(ctx, loss ? liveRows * sizeof(double) : 0);
  if (liveRows > 0) {
    launchKernel(xentKernel<T>, rowBlocks(liveRows), kRowThreads, 0, stream,
                 logits, labels, dloss, loss ? rowLoss.as<double>() : nullptr,
                 dlogits, liveRows, cols, divisor, deviceErrorSlot(ctx));
    ZRT_CUDA_CHECK_LAUNCH("softmax_xent");
  }
  if (!loss)
    return;
  launchKernel(xentTotalKernel, 1, kFinalThreads, 0, stream,
               rowLoss.as<double>(), liveRows, divisor, loss);
  ZRT_CUDA_CHECK_LAUNCH("softmax_xent");
}

void softmaxXent(zrt_context *ctx, int32_t dtype, const void *logits,
                 const int32_t *labels, float *loss, int64_t rows, int64_t cols,
                 float divisor) {
  dispatchDtype("zrt_softmax_xent", dtype, [&](auto tag) {
    using T = decltype(tag);
    launchXent<T>(ctx, static_cast<const T *>(logits),
                  labels, nullptr, loss, nullptr, rows, cols, divisor);
  });
}

void softmaxXentGrad(zrt_context *ctx, int32_t dtype, const void *logits,
                     const int32_t *labels, const float *dloss, void *dlogits,
                     int64_t rows, int64_t cols, float divisor) {
  dispatchDtype("zrt_softmax_xent_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    launchXent<T>(ctx, static_cast<const T *>(logits), labels, dloss, nullptr,
                  static_cast<T *>(dlogits), rows, cols, divisor);
  });
}

void softmaxXentFused(zrt_context *ctx, int32_t dtype, const void *logits,
                      const int32_t *labels, const float *dloss, float *loss,
                      void *dlogits, int64_t rows, int64_t cols,
                      float divisor) {
  dispatchDtype("zrt_softmax_xent_fused", dtype, [&](auto tag) {
    using T = decltype(tag);
    launchXent<T>(ctx, static_cast<const T *>(logits), labels, dloss, loss,
                  static_cast<T *>(dlogits), rows, cols, divisor);
  });
}

} // namespace zrt::cuda
