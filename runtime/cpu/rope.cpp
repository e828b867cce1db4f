//===- rope.cpp - Rotary position embedding (and its inverse) -------------===//
//
// Hugging Face Llama's convention (rotate_half): within each head, element i
// pairs with element i + head_dim/2 and the pair turns by pos * inv_freq[i].
// The frequencies come from the compiler (nn.rope's base and scaling, in
// transformers' float32 order of operations); the angle is the float32
// product as in HF, so that positions far into the sequence round the same
// way. cos and sin are tabulated once per call for every (position,
// frequency). Rotation is orthogonal, so the gradient is the rotation by the
// negative angle (`inverse`).
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

#include <cmath>
#include <vector>

using namespace zrt;

ZRT_CPU_CLONES void zrt::cpu::rope(zrt_context *, int32_t dtype, const void *x, void *y,
                    int64_t batch, int64_t seq, int64_t heads, int64_t headDim,
                    const float *invFreq, int32_t inverse) {
  floatDtypeSize("zrt_rope", dtype);
  if (headDim % 2 != 0)
    fatal("zrt_rope: head_dim %lld is odd; rotation needs pairs",
          (long long)headDim);
  const int64_t half = headDim / 2;
  std::vector<float> cosTable(seq * half), sinTable(seq * half);
  for (int64_t i = 0; i < half; ++i) {
    for (int64_t p = 0; p < seq; ++p) {
      float angle = (float)p * invFreq[i];
      cosTable[p * half + i] = std::cos(angle);
      sinTable[p * half + i] = inverse ? -std::sin(angle) : std::sin(angle);
    }
  }
  const int64_t width = heads * headDim;
  dispatchDtype("zrt_rope", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t row = 0; row < batch * seq; ++row) {
      const float *c = &cosTable[(row % seq) * half];
      const float *s = &sinTable[(row % seq) * half];
      for (int64_t h = 0; h < heads; ++h) {
        const T *in = (const T *)x + row * width + h * headDim;
        T *out = (T *)y + row * width + h * headDim;
        for (int64_t i = 0; i < half; ++i) {
          // Both halves are read before either is written (y may be x).
          float lo = load(in, i), hi = load(in, i + half);
          store(out, i, lo * c[i] - hi * s[i]);
          store(out, i + half, hi * c[i] + lo * s[i]);
        }
      }
    }
  });
}
