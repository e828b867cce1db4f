//===- add.cpp - Elementwise add (residuals, gradient accumulation) -------===//

#include "core/trace.h"
#include "cpu/dtype.h"

using namespace zrt;

extern "C" void zrt_add(zrt_context *ctx, int32_t dtype, const void *a,
                        const void *b, void *y, int64_t n) {
  TraceScope trace(ctx, "add");
  ZRT_ON_DEVICE(add, ctx, dtype, a, b, y, n);
  dispatchDtype("zrt_add", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i)
      store((T *)y, i, load((const T *)a, i) + load((const T *)b, i));
  });
}
