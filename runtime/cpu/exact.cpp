//===- exact.cpp - The exact sums of --deterministic programs -------------===//
//
// zrt_accumulate_exact, zrt_sum_squares_exact and zrt_from_exact: the
// conversions and the sum of core/exact.h, element by element. An exact sum
// does not depend on its order, so sum_squares_exact gives the same bits
// however x is split across calls, ranks or shards.
//
//===----------------------------------------------------------------------===//

#include "core/exact.h"
#include "cpu/dtype.h"
#include "cpu/kernels.h"

using namespace zrt;

void zrt::cpu::accumulateExact(zrt_context *, int32_t dtype, const void *x,
                               void *acc, int64_t n) {
  dispatchDtype("zrt_accumulate_exact", dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *data = (const T *)x;
    for (int64_t i = 0; i < n; ++i)
      storeExact(acc, i,
                 exactAdd(loadExact(acc, i), toExact((double)load(data, i))));
  });
}

void zrt::cpu::sumSquaresExact(zrt_context *, int32_t dtype, const void *x,
                               void *acc, int64_t n) {
  dispatchDtype("zrt_sum_squares_exact", dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *data = (const T *)x;
    Exact sum = loadExact(acc, 0);
    for (int64_t i = 0; i < n; ++i) {
      // A float32 squared in double is exact (24-bit significands).
      double v = load(data, i);
      sum = exactAdd(sum, toExact(v * v));
    }
    storeExact(acc, 0, sum);
  });
}

void zrt::cpu::fromExact(zrt_context *, const void *exact, float *out,
                         int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = zrt::fromExact(loadExact(exact, i));
}
