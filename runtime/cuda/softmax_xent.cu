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

void softmaxXent(zrt_context *ctx, int32_t dtype, const void *logits,
                 const int32_t *labels, float *loss, int64_t rows, int64_t cols,
                 float divisor) {
  dispatchDtype("zrt_softmax_xent", dtype, [&](auto tag) {
    using T = decltype(tag);
    cudaStream_t stream = computeStream(ctx);
    const int64_t liveRows = std::max<int64_t>(rows, 0);
    Scratch rowLoss(ctx, liveRows * sizeof(double));
    if (liveRows > 0) {
      launchKernel(xentRowKernel<T>, rowBlocks(liveRows), kRowThreads, 0,
                   stream, static_cast<const T *>(logits), labels,
                   rowLoss.as<double>(), liveRows, cols, deviceErrorSlot(ctx));
      ZRT_CUDA_CHECK_LAUNCH("zrt_softmax_xent");
    }
    // Also for no rows: the loss is then 0 / divisor, as on the CPU.
    launchKernel(xentTotalKernel, 1, kFinalThreads, 0, stream,
                 rowLoss.as<double>(), liveRows, divisor, loss);
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
    launchKernel(xentGradKernel<T>, rowBlocks(rows), kRowThreads, 0, stream,
                 static_cast<const T *>(logits), labels, dloss,
                 static_cast<T *>(dlogits), rows, cols, divisor,
                 deviceErrorSlot(ctx));
    ZRT_CUDA_CHECK_LAUNCH("zrt_softmax_xent_grad");
  });
}

void softmaxXentFused(zrt_context *ctx, int32_t dtype, const void *logits,
                      const int32_t *labels, const float *dloss, float *loss,
                      void *dlogits, int64_t rows, int64_t cols,
                      float divisor) {
  dispatchDtype("zrt_softmax_xent_fused", dtype, [&](auto tag) {
    using T = decltype(tag);
    cudaStream_t stream = computeStream(ctx);
    const int64_t liveRows = std::max<int64_t>(rows, 0);
    Scratch rowLoss(ctx, liveRows * sizeof(double));
    if (liveRows > 0) {
      launchKernel(xentFusedKernel<T>, rowBlocks(liveRows), kRowThreads, 0,
                   stream, static_cast<const T *>(logits), labels, dloss,
                   rowLoss.as<double>(), static_cast<T *>(dlogits), liveRows,
                   cols, divisor, deviceErrorSlot(ctx));
      ZRT_CUDA_CHECK_LAUNCH("zrt_softmax_xent_fused");
    }
    launchKernel(xentTotalKernel, 1, kFinalThreads, 0, stream,
                 rowLoss.as<double>(), liveRows, divisor, loss);
    ZRT_CUDA_CHECK_LAUNCH("zrt_softmax_xent_fused");
  });
}

} // namespace zrt::cuda
