//===- bias.cpp - Bias add and its gradient (sum over rows) ---------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

#include <vector>

using namespace zrt;

ZRT_CPU_CLONES void zrt::cpu::biasAdd(zrt_context *, int32_t dtype, const void *x,
                       const void *bias, void *y, int64_t rows, int64_t cols) {
  dispatchDtype("zrt_bias_add", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        store((T *)y, r * cols + c,
              load((const T *)x, r * cols + c) + load((const T *)bias, c));
  });
}

ZRT_CPU_CLONES void zrt::cpu::sumRows(zrt_context *, int32_t dtype, const void *x, void *y,
                       int64_t rows, int64_t cols) {
  dispatchDtype("zrt_sum_rows", dtype, [&](auto tag) {
    using T = decltype(tag);
    // Row by row keeps the reads contiguous; the sum order per column is the
    // row order, so results do not depend on the machine. The float32
    // accumulators keep bf16 from rounding every partial sum.
    std::vector<float> sums(cols, 0.0f);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        sums[c] += load((const T *)x, r * cols + c);
    for (int64_t c = 0; c < cols; ++c)
      store((T *)y, c, sums[c]);
  });
}
