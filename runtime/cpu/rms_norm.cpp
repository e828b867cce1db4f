//===- rms_norm.cpp - RMSNorm (Llama) forward and backward ----------------===//
//
// As Hugging Face's LlamaRMSNorm: y = x * rsqrt(mean(x^2) + eps) * gamma,
// computed in float32 and rounded once (HF rounds the normalised x to the
// input dtype before the gain; one rounding is the more accurate choice and
// differs by at most a bf16 ulp). The backward pass recomputes the row's
// scale.
//
//===----------------------------------------------------------------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

#include <cmath>
#include <vector>

using namespace zrt;

/// 1 / sqrt(mean(row^2) + eps).
template <typename T>
static float rowInvRms(const T *row, int64_t cols, float eps) {
  float squares = 0.0f;
  for (int64_t c = 0; c < cols; ++c) {
    float v = load(row, c);
    squares += v * v;
  }
  return 1.0f / std::sqrt(squares / (float)cols + eps);
}

ZRT_CPU_CLONES void zrt::cpu::rmsNorm(zrt_context *, int32_t dtype, const void *x,
                       const void *gamma, void *y, int64_t rows, int64_t cols,
                       float eps) {
  dispatchDtype("zrt_rms_norm", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t r = 0; r < rows; ++r) {
      const T *row = (const T *)x + r * cols;
      float inv = rowInvRms(row, cols, eps);
      for (int64_t c = 0; c < cols; ++c)
        store((T *)y + r * cols, c,
              load(row, c) * inv * load((const T *)gamma, c));
    }
  });
}

// With r = rowInvRms and g = dy * gamma:
//   dx = r * g - x * r^3 * mean(g * x),  dgamma = sum_rows dy * x * r.
ZRT_CPU_CLONES void zrt::cpu::rmsNormGrad(zrt_context *, int32_t dtype, const void *x,
                           const void *gamma, const void *dy, void *dx,
                           void *dgamma, int64_t rows, int64_t cols,
                           float eps) {
  dispatchDtype("zrt_rms_norm_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    std::vector<float> dgammaSum(cols, 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      const T *row = (const T *)x + r * cols;
      const T *dyRow = (const T *)dy + r * cols;
      float inv = rowInvRms(row, cols, eps);
      float meanGx = 0.0f;
      for (int64_t c = 0; c < cols; ++c) {
        float v = load(row, c), d = load(dyRow, c);
        meanGx += d * load((const T *)gamma, c) * v;
        dgammaSum[c] += d * v * inv;
      }
      meanGx /= (float)cols;
      float cubed = inv * inv * inv;
      for (int64_t c = 0; c < cols; ++c) {
        float g = load(dyRow, c) * load((const T *)gamma, c);
        store((T *)dx + r * cols, c, inv * g - load(row, c) * cubed * meanGx);
      }
    }
    for (int64_t c = 0; c < cols; ++c)
      store((T *)dgamma, c, dgammaSum[c]);
  });
}
