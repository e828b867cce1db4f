//===- adamw.cpp - AdamW update -------------------------------------------===//
//
// Follows torch.optim.AdamW's single-tensor path operation for operation
// (decay first, then the moments, bias corrections computed in double as
// Python floats are), so that fp32 runs track a PyTorch reference to
// rounding rather than to a formula rearrangement. Parameters (or master
// weights) and moments are always float32; only the gradient may be bf16,
// and it is unscaled (grad_scale: clipping or loss scaling) as it is read.
//
//===----------------------------------------------------------------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

#include <cmath>

using namespace zrt;

ZRT_CPU_CLONES void zrt::cpu::adamw(zrt_context *, int32_t gradDtype, const float *p,
                     const void *g, const float *m, const float *v, float *pOut,
                     float *mOut, float *vOut, int64_t n, const float *lr,
                     const float *step, const float *gradScale,
                     const float *beta1Slot, const float *beta2Slot,
                     const float *epsSlot, const float *weightDecaySlot) {
  const float beta1 = beta1Slot[0], beta2 = beta2Slot[0], eps = epsSlot[0],
              weightDecay = weightDecaySlot[0];
  double t = step[0];
  double biasCorrection1 = 1.0 - std::pow((double)beta1, t);
  double biasCorrection2 = 1.0 - std::pow((double)beta2, t);
  float decay = (float)(1.0 - (double)lr[0] * weightDecay);
  float stepSize = (float)(lr[0] / biasCorrection1);
  float biasCorrection2Sqrt = (float)std::sqrt(biasCorrection2);
  float scale = gradScale ? gradScale[0] : 1.0f;
  dispatchDtype("zrt_adamw", gradDtype, [&](auto tag) {
    using T = decltype(tag);
    const T *grads = (const T *)g;
    // The update may be in place (pOut == p, mOut == m, vOut == v).
    ZRT_VECTORIZE
    for (int64_t i = 0; i < n; ++i) {
      float grad = load(grads, i) * scale;
      float param = p[i] * decay;
      float m1 = m[i] + (1.0f - beta1) * (grad - m[i]); // torch's lerp_
      float v1 = v[i] * beta2 + (1.0f - beta2) * grad * grad;
      float denom = std::sqrt(v1) / biasCorrection2Sqrt + eps;
      pOut[i] = param - stepSize * m1 / denom;
      mOut[i] = m1;
      vOut[i] = v1;
    }
  });
}
