//===- gelu.cpp - GELU (tanh approximation) forward and backward ----------===//
//
// The tanh form is GPT-2's, so losses match a PyTorch reference that uses
// nn.GELU(approximate="tanh").
//
//===----------------------------------------------------------------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"

#include <cmath>

using namespace zrt;

static constexpr float kSqrt2OverPi = 0.7978845608028654f;
static constexpr float kCubic = 0.044715f;

void zrt::cpu::gelu(zrt_context *, int32_t dtype, const void *x, void *y,
                    int64_t n) {
  dispatchDtype("zrt_gelu", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) {
      float v = load((const T *)x, i);
      float u = kSqrt2OverPi * (v + kCubic * v * v * v);
      store((T *)y, i, 0.5f * v * (1.0f + std::tanh(u)));
    }
  });
}

void zrt::cpu::geluGrad(zrt_context *, int32_t dtype, const void *x,
                        const void *dy, void *dx, int64_t n) {
  dispatchDtype("zrt_gelu_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) {
      float v = load((const T *)x, i);
      float u = kSqrt2OverPi * (v + kCubic * v * v * v);
      float t = std::tanh(u);
      float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * v * v);
      float local = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
      store((T *)dx, i, load((const T *)dy, i) * local);
    }
  });
}
