//===- softmax_xent.cpp - Softmax cross-entropy forward and backward ------===//
//
// zrt_softmax_xent_fused does both in one pass over each row, with the same
// arithmetic, for a step that reads the loss only after its gradient.
//
// Both directions subtract the row maximum before exponentiating, so large
// logits cannot overflow. Row sums accumulate in double: the loss is a sum
// over the whole local batch and should not depend on its size for accuracy.
// The loss and its incoming gradient are float32 whatever the logits' dtype.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "cpu/dtype.h"
#include "cpu/kernels.h"

#include <algorithm>
#include <cmath>

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

/// log(sum_c exp(row[c] - max)) and max, for one row.
template <typename T>
static void rowLogSumExp(const T *row, int64_t cols, float &max,
                         double &logSum) {
  max = load(row, 0);
  for (int64_t c = 1; c < cols; ++c)
    max = std::max(max, load(row, c));
  double sum = 0.0;
  for (int64_t c = 0; c < cols; ++c)
    sum += std::exp((double)(load(row, c) - max));
  logSum = std::log(sum);
}

/// The row loop of all three kernels: each row's log-sum-exp once, then its
/// loss (logsumexp - logit[label]) added to `*total` when `total` is given,
/// and its gradient scale * (softmax - onehot) written to `dlogits` when
/// that is given. The loss reads the label's logit before the gradient
/// overwrites the row: dlogits may alias logits.
template <typename T>
static void xentRows(const T *logits, const int32_t *labels, int64_t rows,
                     int64_t cols, double *total, double scale, T *dlogits) {
  for (int64_t r = 0; r < rows; ++r) {
    const T *row = logits + r * cols;
    float max;
    double logSum;
    rowLogSumExp(row, cols, max, logSum);
    if (total)
      *total += (double)max + logSum - (double)load(row, labels[r]);
    if (!dlogits)
      continue;
    T *out = dlogits + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      double p = std::exp((double)(load(row, c) - max) - logSum);
      store(out, c, (float)(scale * (p - (c == labels[r] ? 1.0 : 0.0))));
    }
  }
}

void zrt::cpu::softmaxXent(zrt_context *, int32_t dtype, const void *logits,
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

void zrt::cpu::softmaxXentGrad(zrt_context *, int32_t dtype, const void *logits,
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

void zrt::cpu::softmaxXentFused(zrt_context *, int32_t dtype,
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
