//===- relu.cpp - ReLU forward and backward -------------------------------===//

#include "core/trace.h"
#include "cpu/dtype.h"

using namespace zrt;

extern "C" void zrt_relu(zrt_context *ctx, int32_t dtype, const void *x,
                         void *y, int64_t n) {
  TraceScope trace(ctx, "relu");
  ZRT_ON_DEVICE(relu, ctx, dtype, x, y, n);
  dispatchDtype("zrt_relu", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) {
      float v = load((const T *)x, i);
      store((T *)y, i, v > 0.0f ? v : 0.0f);
    }
  });
}

extern "C" void zrt_relu_grad(zrt_context *ctx, int32_t dtype, const void *x,
                              const void *dy, void *dx, int64_t n) {
  TraceScope trace(ctx, "relu_grad");
  ZRT_ON_DEVICE(relu_grad, ctx, dtype, x, dy, dx, n);
  dispatchDtype("zrt_relu_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i)
      store((T *)dx, i,
            load((const T *)x, i) > 0.0f ? load((const T *)dy, i) : 0.0f);
  });
}
