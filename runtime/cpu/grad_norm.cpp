//===- grad_norm.cpp - Global gradient norm and the clipping coefficient --===//
//
// Clipping by global norm is split in two so that ZeRO can sum the squares
// of its gradient shards across ranks in between: sum_squares per local
// tensor, an all-reduce of the partial sums, then clip_coefficient.
//
//===----------------------------------------------------------------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

#include <cmath>

using namespace zrt;

ZRT_CPU_CLONES void zrt::cpu::sumSquares(zrt_context *, int32_t dtype, const void *x,
                          float *out, int64_t n) {
  dispatchDtype("zrt_sum_squares", dtype, [&](auto tag) {
    using T = decltype(tag);
    // Double accumulation: a shard holds millions of squares. In kLanes
    // partial sums (added in a fixed order at the end), which the compiler
    // keeps in SIMD registers: one running sum is a chain of dependent adds,
    // and so is one register's worth (8 lanes took 31 ms a step for GPT-2
    // 124M's gradients on Zen 4, latency-bound; 32 lanes are four chains).
    constexpr int64_t kLanes = 32;
    double lanes[kLanes] = {};
    const T *data = (const T *)x;
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int64_t j = 0; j < kLanes; ++j) {
        double v = load(data, i + j);
        lanes[j] += v * v;
      }
    for (; i < n; ++i) {
      double v = load(data, i);
      lanes[0] += v * v;
    }
    double sum = 0.0;
    for (double lane : lanes)
      sum += lane;
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
