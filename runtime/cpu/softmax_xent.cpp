//===- softmax_xent.cpp - Softmax cross-entropy forward and backward ------===//
//
// zrt_softmax_xent_fused does both in one pass over each row, with the same
// arithmetic, for a step that reads the loss only after its gradient.
//
// Both directions subtract the row maximum before exponentiating, so large
// logits cannot overflow. Each row's exponentials are computed once, in
// float32 by the vectorised exp of cpu/vector_math.h, and kept for the
// gradient; row sums and the loss accumulate in double: the loss is a sum
// over the whole local batch and should not depend on its size for accuracy.
// The loss and its incoming gradient are float32 whatever the logits' dtype.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace zrt;

/// Stops the job on the first label outside [0, cols); one rank may be the
/// only one holding a bad row, hence fatal (MPI_Abort) rather than exit.
static void checkLabels(const char *kernel, const int32_t *labels, int64_t rows,
                        int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    if (labels[r] < 0 || labels[r] >= cols)
      fatal("%s: label %d in row %lld is outside [0, %lld)", kernel, labels[r],
            (long long)r, (long long)cols);
}

/// The largest of row[0..cols), in kLanes running maxima that the compiler
/// keeps in one SIMD register (a single running maximum is a dependency
/// chain it may not split).
template <typename T> static float rowMax(const T *row, int64_t cols) {
  constexpr int64_t kLanes = 8;
  float lanes[kLanes];
  float first = load(row, 0);
  std::fill(lanes, lanes + kLanes, first);
  int64_t c = 0;
  for (; c + kLanes <= cols; c += kLanes)
    for (int64_t j = 0; j < kLanes; ++j)
      lanes[j] = std::max(lanes[j], load(row, c + j));
  for (; c < cols; ++c)
    lanes[0] = std::max(lanes[0], load(row, c));
  return *std::max_element(lanes, lanes + kLanes);
}

/// exp(row[c] - max) into `exps`, and their sum (in double, in kLanes
/// partial sums added in a fixed order).
template <typename T>
static double rowExps(const T *row, int64_t cols, float max, float *exps) {
  ZRT_VECTORIZE
  for (int64_t c = 0; c < cols; ++c)
    exps[c] = vmath::exp(load(row, c) - max);
  constexpr int64_t kLanes = 8;
  double lanes[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= cols; c += kLanes)
    for (int64_t j = 0; j < kLanes; ++j)
      lanes[j] += exps[c + j];
  for (; c < cols; ++c)
    lanes[0] += exps[c];
  double sum = 0.0;
  for (double lane : lanes)
    sum += lane;
  return sum;
}

/// The row loop of all three kernels: each row's exponentials once (kept in
/// a row of scratch), then its loss (logsumexp - logit[label]) added to
/// `*total` when `total` is given, and its gradient scale * (softmax -
/// onehot) written to `dlogits` when that is given. The loss reads the
/// label's logit before the gradient overwrites the row: dlogits may alias
/// logits.
template <typename T>
static void xentRows(const T *logits, const int32_t *labels, int64_t rows,
                     int64_t cols, double *total, double scale, T *dlogits) {
  std::vector<float> exps(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const T *row = logits + r * cols;
    float max = rowMax(row, cols);
    double sum = rowExps(row, cols, max, exps.data());
    int32_t label = labels[r];
    if (total)
      *total += (double)max + std::log(sum) - (double)load(row, label);
    if (!dlogits)
      continue;
    T *out = dlogits + r * cols;
    float factor = (float)(scale / sum);
    const float *e = exps.data();
    ZRT_VECTORIZE
    for (int64_t c = 0; c < cols; ++c)
      store(out, c, e[c] * factor);
    store(out, label, (float)(scale * ((double)e[label] / sum - 1.0)));
  }
}

ZRT_CPU_CLONES void zrt::cpu::softmaxXent(zrt_context *, int32_t dtype, const void *logits,
                           const int32_t *labels, float *loss, int64_t rows,
                           int64_t cols, float divisor) {
  checkLabels("zrt_softmax_xent", labels, rows, cols);
  dispatchDtype("zrt_softmax_xent", dtype, [&](auto tag) {
    using T = decltype(tag);
    double total = 0.0;
    xentRows<T>((const T *)logits, labels, rows, cols, &total, 0.0, nullptr);
    loss[0] = (float)(total / divisor);
  });
}

ZRT_CPU_CLONES void zrt::cpu::softmaxXentGrad(zrt_context *, int32_t dtype, const void *logits,
                               const int32_t *labels, const float *dloss,
                               void *dlogits, int64_t rows, int64_t cols,
                               float divisor) {
  checkLabels("zrt_softmax_xent_grad", labels, rows, cols);
  dispatchDtype("zrt_softmax_xent_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    xentRows<T>((const T *)logits, labels, rows, cols, nullptr,
                (double)dloss[0] / divisor, (T *)dlogits);
  });
}

ZRT_CPU_CLONES void zrt::cpu::softmaxXentFused(zrt_context *, int32_t dtype,
                                const void *logits, const int32_t *labels,
                                const float *dloss, float *loss, void *dlogits,
                                int64_t rows, int64_t cols, float divisor) {
  checkLabels("zrt_softmax_xent_fused", labels, rows, cols);
  dispatchDtype("zrt_softmax_xent_fused", dtype, [&](auto tag) {
    using T = decltype(tag);
    double total = 0.0;
    xentRows<T>((const T *)logits, labels, rows, cols, &total,
                (double)dloss[0] / divisor, (T *)dlogits);
    loss[0] = (float)(total / divisor);
  });
}
