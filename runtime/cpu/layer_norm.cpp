//===- layer_norm.cpp - LayerNorm forward and backward --------------------===//
//
// As torch.nn.LayerNorm: biased variance, eps inside the square root. The
// statistics are computed in two passes (mean, then squared deviations) in
// float32, which is accurate even when the mean is large against the spread.
// The backward pass recomputes them rather than keeping them from the
// forward: the ABI passes no saved statistics, and a row costs little.
//
//===----------------------------------------------------------------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

#include <cmath>
#include <vector>

using namespace zrt;

namespace {
struct RowStats {
  float mean;
  float rstd; // 1 / sqrt(var + eps)
};
} // namespace

template <typename T>
static RowStats rowStats(const T *row, int64_t cols, float eps) {
  float sum = 0.0f;
  for (int64_t c = 0; c < cols; ++c)
    sum += load(row, c);
  float mean = sum / (float)cols;
  float squares = 0.0f;
  for (int64_t c = 0; c < cols; ++c) {
    float d = load(row, c) - mean;
    squares += d * d;
  }
  return {mean, 1.0f / std::sqrt(squares / (float)cols + eps)};
}

ZRT_CPU_CLONES void zrt::cpu::layerNorm(zrt_context *, int32_t dtype, const void *x,
                         const void *gamma, const void *beta, void *y,
                         int64_t rows, int64_t cols, float eps) {
  dispatchDtype("zrt_layer_norm", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t r = 0; r < rows; ++r) {
      const T *row = (const T *)x + r * cols;
      RowStats s = rowStats(row, cols, eps);
      for (int64_t c = 0; c < cols; ++c) {
        float xHat = (load(row, c) - s.mean) * s.rstd;
        store((T *)y + r * cols, c,
              xHat * load((const T *)gamma, c) + load((const T *)beta, c));
      }
    }
  });
}

// With xHat = (x - mean) * rstd and g = dy * gamma:
//   dx = rstd * (g - mean(g) - xHat * mean(g * xHat)).
ZRT_CPU_CLONES void zrt::cpu::layerNormGrad(zrt_context *, int32_t dtype, const void *x,
                             const void *gamma, const void *dy, void *dx,
                             void *dgamma, void *dbeta, int64_t rows,
                             int64_t cols, float eps) {
  dispatchDtype("zrt_layer_norm_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    std::vector<float> dgammaSum(cols, 0.0f), dbetaSum(cols, 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      const T *row = (const T *)x + r * cols;
      const T *dyRow = (const T *)dy + r * cols;
      RowStats s = rowStats(row, cols, eps);
      float meanG = 0.0f, meanGxHat = 0.0f;
      for (int64_t c = 0; c < cols; ++c) {
        float xHat = (load(row, c) - s.mean) * s.rstd;
        float d = load(dyRow, c);
        float g = d * load((const T *)gamma, c);
        meanG += g;
        meanGxHat += g * xHat;
        dgammaSum[c] += d * xHat;
        dbetaSum[c] += d;
      }
      meanG /= (float)cols;
      meanGxHat /= (float)cols;
      for (int64_t c = 0; c < cols; ++c) {
        float xHat = (load(row, c) - s.mean) * s.rstd;
        float g = load(dyRow, c) * load((const T *)gamma, c);
        store((T *)dx + r * cols, c, s.rstd * (g - meanG - xHat * meanGxHat));
      }
    }
    for (int64_t c = 0; c < cols; ++c) {
      store((T *)dgamma, c, dgammaSum[c]);
      store((T *)dbeta, c, dbetaSum[c]);
    }
  });
}
