//===- relu.cpp - ReLU forward and backward -------------------------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

using namespace zrt;

ZRT_CPU_CLONES void zrt::cpu::relu(zrt_context *, int32_t dtype, const void *x, void *y,
                    int64_t n) {
  dispatchDtype("zrt_relu", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) {
      float v = load((const T *)x, i);
      store((T *)y, i, v > 0.0f ? v : 0.0f);
    }
  });
}

ZRT_CPU_CLONES void zrt::cpu::reluGrad(zrt_context *, int32_t dtype, const void *x,
                        const void *dy, void *dx, int64_t n) {
  dispatchDtype("zrt_relu_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i)
      store((T *)dx, i,
            load((const T *)x, i) > 0.0f ? load((const T *)dy, i) : 0.0f);
  });
}
