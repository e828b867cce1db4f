//===- optimizer.cu - Gradient norm, clipping coefficient and AdamW -------===//
//
// sum_squares is a two-pass reduction with a grid that depends only on n:
// each block sums its grid-stride share in double (as the CPU backend does:
// a shard holds millions of squares, and the norm must not depend on how
// the parameters are split), writes one partial, and a single block adds
// the partials in a fixed order. No atomics, so the result is the same run
// to run. clip_coefficient is one thread: its inputs live on the device.
//
// AdamW follows the CPU backend (itself torch.optim.AdamW's single-tensor
// path) operation for operation. Its step-dependent scalars (bias
// corrections in double, the decay factor, the step size) come from device
// buffers (lr, step, grad_scale), so thread 0 of each block derives them
// once into shared memory rather than every thread calling a double pow.
// p/m/v may be updated in place: each thread reads an element's p, m, v and
// g before writing it.
//
//===----------------------------------------------------------------------===//

#include "cuda/device_math.cuh"

namespace zrt::cuda {

namespace {

constexpr int kSumThreads = 256;
constexpr int64_t kMaxSumBlocks = 1024;
constexpr int kFinalThreads = 1024;

template <typename T>
__global__ void __launch_bounds__(kSumThreads)
    sumSquaresPartialKernel(const T *x, int64_t n, int64_t packs,
                            double *partials) {
  constexpr int kSize = Pack<T>::kSize;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  double sum = 0.0;
  for (int64_t p = tid; p < packs; p += stride) {
    Pack<T> pack = loadPack(x, p * kSize);
#pragma unroll
    for (int j = 0; j < kSize; ++j) {
      double v = toFloat(pack.v[j]);
      sum += v * v;
    }
  }
  for (int64_t i = packs * kSize + tid; i < n; i += stride) {
    double v = load(x, i);
    sum += v * v;
  }
  sum = blockSum(sum);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(kFinalThreads)
    sumSquaresFinalKernel(const double *partials, int64_t count, float *out) {
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
    sum += partials[i];
  sum = blockSum(sum);
  if (threadIdx.x == 0)
    out[0] = (float)sum;
}

// As torch.nn.utils.clip_grad_norm_: coef = max_norm / (norm + 1e-6),
// clamped to at most 1, in float32; a NaN norm gives a NaN coefficient.
__global__ void clipCoefficientKernel(const float *totalSq,
                                      const float *maxNorm, float *coef) {
  if (!(maxNorm[0] > 0.0f)) {
    coef[0] = 1.0f;
    return;
  }
  const float norm = sqrtf(totalSq[0]);
  const float ratio = maxNorm[0] / (norm + 1e-6f);
  coef[0] = ratio > 1.0f ? 1.0f : ratio;
}

template <typename T>
__global__ void
adamwKernel(const float *p, const T *g, const float *m, const float *v,
            float *pOut, float *mOut, float *vOut, int64_t n, const float *lr,
            const float *step, const float *gradScale, float beta1, float beta2,
            float eps, float weightDecay) {
  __shared__ float decay, stepSize, biasCorrection2Sqrt, scale;
  if (threadIdx.x == 0) {
    const double t = step[0];
    const double biasCorrection1 = 1.0 - pow((double)beta1, t);
    const double biasCorrection2 = 1.0 - pow((double)beta2, t);
    decay = (float)(1.0 - (double)lr[0] * weightDecay);
    stepSize = (float)(lr[0] / biasCorrection1);
    biasCorrection2Sqrt = (float)sqrt(biasCorrection2);
    scale = gradScale ? gradScale[0] : 1.0f;
  }
  __syncthreads();
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float grad = load(g, i) * scale;
    const float param = p[i] * decay;
    const float m0 = m[i];
    const float m1 = m0 + (1.0f - beta1) * (grad - m0); // torch's lerp_
    const float v1 = v[i] * beta2 + (1.0f - beta2) * grad * grad;
    const float denom = sqrtf(v1) / biasCorrection2Sqrt + eps;
    pOut[i] = param - stepSize * m1 / denom;
    mOut[i] = m1;
    vOut[i] = v1;
  }
}

} // namespace

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
    const int64_t packs = isAligned16(x) ? n / kSize : 0;
    // A function of n alone (and of x's alignment, which never changes for
    // a given tensor), so the summation order is fixed.
    const int64_t blocks = std::clamp<int64_t>(
        ceilDiv(n, (int64_t)kSumThreads * 4 * kSize), 1, kMaxSumBlocks);
    Scratch partials(stream, blocks * sizeof(double));
    sumSquaresPartialKernel<T><<<(unsigned)blocks, kSumThreads, 0, stream>>>(
        static_cast<const T *>(x), n, packs, partials.as<double>());
    ZRT_CUDA_CHECK_LAUNCH("zrt_sum_squares");
    sumSquaresFinalKernel<<<1, kFinalThreads, 0, stream>>>(
        partials.as<double>(), blocks, out);
    ZRT_CUDA_CHECK_LAUNCH("zrt_sum_squares");
  });
}

void clipCoefficient(zrt_context *ctx, const float *totalSq,
                     const float *maxNorm, float *coef) {
  clipCoefficientKernel<<<1, 1, 0, computeStream(ctx)>>>(totalSq, maxNorm,
                                                         coef);
  ZRT_CUDA_CHECK_LAUNCH("zrt_clip_coefficient");
}

void adamw(zrt_context *ctx, int32_t gradDtype, const float *p, const void *g,
           const float *m, const float *v, float *pOut, float *mOut,
           float *vOut, int64_t n, const float *lr, const float *step,
           const float *gradScale, float beta1, float beta2, float eps,
           float weightDecay) {
  dispatchDtype("zrt_adamw", gradDtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0)
      return;
    adamwKernel<T><<<gridFor(n), kThreads, 0, computeStream(ctx)>>>(
        p, static_cast<const T *>(g), m, v, pOut, mOut, vOut, n, lr, step,
        gradScale, beta1, beta2, eps, weightDecay);
    ZRT_CUDA_CHECK_LAUNCH("zrt_adamw");
  });
}

} // namespace zrt::cuda
