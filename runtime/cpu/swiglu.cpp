//===- swiglu.cpp - SwiGLU (Llama's gated MLP) forward and backward -------===//
//
// y = silu(gate) * up with silu(g) = g * sigmoid(g). The sigmoid is
// 1 / (1 + exp(-g)) (cpu/vector_math.h, vectorised), which saturates to 0 or
// 1 without overflow trouble: exp(-g) may be inf for very negative g, and
// 1 / inf is 0.
//
//===----------------------------------------------------------------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

using namespace zrt;

ZRT_CPU_CLONES void zrt::cpu::swiglu(zrt_context *, int32_t dtype, const void *gate,
                      const void *up, void *y, int64_t n) {
  dispatchDtype("zrt_swiglu", dtype, [&](auto tag) {
    using T = decltype(tag);
    ZRT_VECTORIZE
    for (int64_t i = 0; i < n; ++i) {
      float g = load((const T *)gate, i);
      store((T *)y, i, g * vmath::sigmoid(g) * load((const T *)up, i));
    }
  });
}

// d silu(g) / dg = s + g s (1 - s), s = sigmoid(g).
ZRT_CPU_CLONES void zrt::cpu::swigluGrad(zrt_context *, int32_t dtype, const void *gate,
                          const void *up, const void *dy, void *dgate,
                          void *dup, int64_t n) {
  dispatchDtype("zrt_swiglu_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    ZRT_VECTORIZE
    for (int64_t i = 0; i < n; ++i) {
      // All reads first: the gradients may overwrite gate, up or dy in place.
      float g = load((const T *)gate, i);
      float u = load((const T *)up, i);
      float d = load((const T *)dy, i);
      float s = vmath::sigmoid(g);
      store((T *)dgate, i, d * u * (s + g * s * (1.0f - s)));
      store((T *)dup, i, d * g * s);
    }
  });
}
