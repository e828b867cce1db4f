//===- optimizer_kernels.cuh - Gradient norm and AdamW kernels -*- CUDA -*-===//
//
// The device code of optimizer.cu (whose comment describes the kernels), in
// a header so that the host emulator of runtime/cuda/tests/emulation
// compiles it too (see device_math.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_OPTIMIZER_KERNELS_CUH
#define ZRT_CUDA_OPTIMIZER_KERNELS_CUH

#include "cuda/device_math.cuh"

#include <cmath>

namespace zrt::cuda::optim {

constexpr int kSumThreads = 256;
constexpr int64_t kMaxSumBlocks = 1024;
constexpr int kFinalThreads = 1024;

/// sumSquaresPartialKernel's grid: a function of n alone (and of the dtype),
/// so that the summation order is fixed.
template <typename T> inline int64_t sumSquaresBlocks(int64_t n) {
  constexpr int kSize = Pack<T>::kSize;
  return std::clamp<int64_t>(ceilDiv(n, (int64_t)kSumThreads * 4 * kSize), 1,
                             kMaxSumBlocks);
}

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
            const float *step, const float *gradScale, const float *beta1Slot,
            const float *beta2Slot, const float *epsSlot,
            const float *weightDecaySlot) {
  __shared__ float beta1, beta2, eps, decay, stepSize, biasCorrection2Sqrt,
      scale;
  if (threadIdx.x == 0) {
    beta1 = beta1Slot[0];
    beta2 = beta2Slot[0];
    eps = epsSlot[0];
    const float weightDecay = weightDecaySlot[0];
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

template <typename T>
__global__ void lionKernel(const float *p, const T *g, const float *m,
                           float *pOut, float *mOut, int64_t n, const float *lr,
                           const float *gradScale, const float *beta1Slot,
                           const float *beta2Slot,
                           const float *weightDecaySlot) {
  const float beta1 = beta1Slot[0], beta2 = beta2Slot[0], rate = lr[0];
  const float decay = 1.0f - rate * weightDecaySlot[0];
  const float scale = gradScale ? gradScale[0] : 1.0f;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float grad = load(g, i) * scale;
    const float m0 = m[i];
    const float mix = m0 * beta1 + grad * (1.0f - beta1);
    // torch.sign: +-1, and 0 (of its sign) or NaN as they are.
    const float sign = mix > 0.0f ? 1.0f : mix < 0.0f ? -1.0f : mix;
    pOut[i] = p[i] * decay - rate * sign;
    mOut[i] = m0 * beta2 + grad * (1.0f - beta2);
  }
}

} // namespace zrt::cuda::optim

#endif // ZRT_CUDA_OPTIMIZER_KERNELS_CUH
