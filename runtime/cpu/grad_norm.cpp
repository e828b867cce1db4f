//===- grad_norm.cpp - Global gradient norm and the clipping coefficient --===//
//
// Clipping by global norm is split in two so that ZeRO can sum the squares
// of its gradient shards across ranks in between: sum_squares per local
// tensor, an all-reduce of the partial sums, then clip_coefficient.
//
//===----------------------------------------------------------------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"

#include <cmath>

using namespace zrt;

void zrt::cpu::sumSquares(zrt_context *, int32_t dtype, const void *x,
                          float *out, int64_t n) {
  dispatchDtype("zrt_sum_squares", dtype, [&](auto tag) {
    using T = decltype(tag);
    // Double accumulation: a shard holds millions of squares, and the norm
    // must not depend on how the parameters are split into shards.
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double v = load((const T *)x, i);
      sum += v * v;
    }
    out[0] = (float)sum;
  });
}

// As torch.nn.utils.clip_grad_norm_: coef = max_norm / (norm + 1e-6), clamped
// to at most 1, in float32. A NaN norm gives a NaN coefficient, as in torch:
// a diverged step should show, not be silently left unclipped.
void zrt::cpu::clipCoefficient(zrt_context *, const float *totalSq,
                               const float *maxNorm, float *coef) {
  if (!(maxNorm[0] > 0.0f)) {
    coef[0] = 1.0f;
    return;
  }
  float norm = std::sqrt(totalSq[0]);
  float ratio = maxNorm[0] / (norm + 1e-6f);
  coef[0] = ratio > 1.0f ? 1.0f : ratio;
}
