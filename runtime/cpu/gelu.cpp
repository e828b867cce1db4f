//===- gelu.cpp - GELU (tanh approximation) forward and backward ----------===//
//
// The tanh form is GPT-2's, so losses match a PyTorch reference that uses
// nn.GELU(approximate="tanh").
//
//===----------------------------------------------------------------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

using namespace zrt;

static constexpr float kSqrt2OverPi = 0.7978845608028654f;
static constexpr float kCubic = 0.044715f;

// 0.5 v (1 + tanh(u)) is v * sigmoid(2u): one exponential, no tanh, and a
// loop the compiler vectorises (cpu/vector_math.h).
static float tanhArgument(float v) {
  return kSqrt2OverPi * (v + kCubic * v * v * v);
}

ZRT_CPU_CLONES void zrt::cpu::gelu(zrt_context *, int32_t dtype, const void *x, void *y,
                    int64_t n) {
  dispatchDtype("zrt_gelu", dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *in = (const T *)x;
    T *out = (T *)y;
    ZRT_VECTORIZE
    for (int64_t i = 0; i < n; ++i) {
      float v = load(in, i);
      store(out, i, v * vmath::sigmoid(2.0f * tanhArgument(v)));
    }
  });
}

ZRT_CPU_CLONES void zrt::cpu::geluGrad(zrt_context *, int32_t dtype, const void *x,
                        const void *dy, void *dx, int64_t n) {
  dispatchDtype("zrt_gelu_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *in = (const T *)x, *upstream = (const T *)dy;
    T *out = (T *)dx;
    ZRT_VECTORIZE
    for (int64_t i = 0; i < n; ++i) {
      float v = load(in, i);
      // With s = sigmoid(2u): d/dv [v s] = s + 2 v s (1 - s) du/dv.
      float s = vmath::sigmoid(2.0f * tanhArgument(v));
      float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * v * v);
      store(out, i, load(upstream, i) * (s + 2.0f * v * s * (1.0f - s) * du));
    }
  });
}
