//===- bias.cpp - Bias add and its gradient (sum over rows) ---------------===//

#include "zero/zrt.h"

extern "C" void zrt_bias_add(zrt_context *, const float *x, const float *bias,
                             float *y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = x[r * cols + c] + bias[c];
}

extern "C" void zrt_sum_rows(zrt_context *, const float *x, float *y,
                             int64_t rows, int64_t cols) {
  // Row by row keeps the reads contiguous; the sum order per column is the
  // row order, so results do not depend on the machine.
  for (int64_t c = 0; c < cols; ++c)
    y[c] = 0.0f;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      y[c] += x[r * cols + c];
}
