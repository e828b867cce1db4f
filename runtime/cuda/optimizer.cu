//===- optimizer.cu - Gradient norm, clipping, AdamW and Lion -------------===//
//
// sum_squares is a two-pass reduction with a grid that depends only on n:
// each block sums its grid-stride share in double (as the CPU backend does:
// a shard holds millions of squares, and the norm must not depend on how
// the parameters are split), writes one partial, and a single block adds
// the partials in a fixed order. No atomics, so the result is the same run
// to run. clip_coefficient is one thread: its inputs live on the device.
//
// AdamW follows the CPU backend (itself torch.optim.AdamW's single-tensor
// path) operation for operation. Its hyperparameters and step-dependent
// scalars (bias corrections in double, the decay factor, the step size) come
// from device buffers (lr, step, betas, eps, weight decay, grad_scale), so
// thread 0 of each block derives them once into shared memory rather than
// every thread calling a double pow.
// p/m/v may be updated in place: each thread reads an element's p, m, v and
// g before writing it. Lion follows the CPU backend the same way; its
// scalars are a few float multiplies, so every thread reads them.
//
// The kernels are in optimizer_kernels.cuh, which the host emulator of
// tests/emulation compiles too (zrt-cuda-kernels-emulated); this file holds
// their launches.
//
//===----------------------------------------------------------------------===//

#include "cuda/launch_utils.cuh"
#include "cuda/optimizer_kernels.cuh"

namespace zrt::cuda {

using namespace optim;

void sumSquares(zrt_context *ctx, int32_t dtype, const void *x, float *out,
                int64_t n) {
  dispatchDtype("zrt_sum_squares", dtype, [&](auto tag) {
    using T = decltype(tag);
    cudaStream_t stream = computeStream(ctx);
    if (n <= 0) {
      ZRT_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
      return;
    }
    constexpr int kSize = Pack<T>::kSize;
    // A function of n alone (and of x's alignment, which never changes for
    // a given tensor), so the summation order is fixed.
    const int64_t packs = isAligned16(x) ? n / kSize : 0;
    const int64_t blocks = sumSquaresBlocks<T>(n);
    Scratch partials(ctx, blocks * sizeof(double));
    launchKernel(sumSquaresPartialKernel<T>, (unsigned)blocks, kSumThreads, 0,
                 stream, static_cast<const T *>(x), n, packs,
                 partials.as<double>());
    ZRT_CUDA_CHECK_LAUNCH("zrt_sum_squares");
    launchKernel(sumSquaresFinalKernel, 1, kFinalThreads, 0, stream,
                 partials.as<double>(), blocks, out);
    ZRT_CUDA_CHECK_LAUNCH("zrt_sum_squares");
  });
}

void clipCoefficient(zrt_context *ctx, const float *totalSq,
                     const float *maxNorm, float *coef) {
  launchKernel(clipCoefficientKernel, 1, 1, 0, computeStream(ctx), totalSq,
               maxNorm, coef);
  ZRT_CUDA_CHECK_LAUNCH("zrt_clip_coefficient");
}

void adamw(zrt_context *ctx, int32_t gradDtype, const float *p, const void *g,
           const float *m, const float *v, float *pOut, float *mOut,
           float *vOut, int64_t n, const float *lr, const float *step,
           const float *gradScale, const float *beta1, const float *beta2,
           const float *eps, const float *weightDecay) {
  dispatchDtype("zrt_adamw", gradDtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0)
      return;
    launchKernel(adamwKernel<T>, gridFor(n), kThreads, 0, computeStream(ctx), p,
                 static_cast<const T *>(g), m, v, pOut, mOut, vOut, n, lr, step,
                 gradScale, beta1, beta2, eps, weightDecay);
    ZRT_CUDA_CHECK_LAUNCH("zrt_adamw");
  });
}

void lion(zrt_context *ctx, int32_t gradDtype, const float *p, const void *g,
          const float *m, float *pOut, float *mOut, int64_t n, const float *lr,
          const float *gradScale, const float *beta1, const float *beta2,
          const float *weightDecay) {
  dispatchDtype("zrt_lion", gradDtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0)
      return;
    launchKernel(lionKernel<T>, gridFor(n), kThreads, 0, computeStream(ctx), p,
                 static_cast<const T *>(g), m, pOut, mOut, n, lr, gradScale,
                 beta1, beta2, weightDecay);
    ZRT_CUDA_CHECK_LAUNCH("zrt_lion");
  });
}

} // namespace zrt::cuda
