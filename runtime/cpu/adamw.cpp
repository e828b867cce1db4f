//===- adamw.cpp - AdamW update -------------------------------------------===//
//
// Follows torch.optim.AdamW's single-tensor path operation for operation
// (decay first, then the moments, bias corrections computed in double as
// Python floats are), so that fp32 runs track a PyTorch reference to
// rounding rather than to a formula rearrangement.
//
//===----------------------------------------------------------------------===//

#include "zero/zrt.h"

#include <cmath>

extern "C" void zrt_adamw(zrt_context *, const float *p, const float *g,
                          const float *m, const float *v, float *pOut,
                          float *mOut, float *vOut, int64_t n, const float *lr,
                          const float *step, float beta1, float beta2,
                          float eps, float weightDecay) {
  double t = step[0];
  double biasCorrection1 = 1.0 - std::pow((double)beta1, t);
  double biasCorrection2 = 1.0 - std::pow((double)beta2, t);
  float decay = (float)(1.0 - (double)lr[0] * weightDecay);
  float stepSize = (float)(lr[0] / biasCorrection1);
  float biasCorrection2Sqrt = (float)std::sqrt(biasCorrection2);
  for (int64_t i = 0; i < n; ++i) {
    float grad = g[i];
    float param = p[i] * decay;
    float m1 = m[i] + (1.0f - beta1) * (grad - m[i]); // torch's lerp_
    float v1 = v[i] * beta2 + (1.0f - beta2) * grad * grad;
    float denom = std::sqrt(v1) / biasCorrection2Sqrt + eps;
    pOut[i] = param - stepSize * m1 / denom;
    mOut[i] = m1;
    vOut[i] = v1;
  }
}
