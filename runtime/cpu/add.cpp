//===- add.cpp - Elementwise add (residuals, gradient accumulation) -------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

using namespace zrt;

ZRT_CPU_CLONES void zrt::cpu::add(zrt_context *, int32_t dtype, const void *a, const void *b,
                   void *y, int64_t n) {
  dispatchDtype("zrt_add", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i)
      store((T *)y, i, load((const T *)a, i) + load((const T *)b, i));
  });
}
