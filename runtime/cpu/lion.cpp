//===- lion.cpp - Lion update ---------------------------------------------===//
//
// Follows lion-pytorch operation for operation (decay first, then the
// interpolation whose sign is the update, then the momentum), so that fp32
// runs track a PyTorch reference to rounding. Parameters (or master weights)
// and the momentum are float32; only the gradient may be bf16, and it is
// unscaled (grad_scale: clipping) as it is read.
//
//===----------------------------------------------------------------------===//

#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

using namespace zrt;

ZRT_CPU_CLONES void
zrt::cpu::lion(zrt_context *, int32_t gradDtype, const float *p, const void *g,
               const float *m, float *pOut, float *mOut, int64_t n,
               const float *lr, const float *gradScale, const float *beta1Slot,
               const float *beta2Slot, const float *weightDecaySlot) {
  const float beta1 = beta1Slot[0], beta2 = beta2Slot[0], rate = lr[0];
  const float decay = 1.0f - rate * weightDecaySlot[0];
  const float scale = gradScale ? gradScale[0] : 1.0f;
  dispatchDtype("zrt_lion", gradDtype, [&](auto tag) {
    using T = decltype(tag);
    const T *grads = (const T *)g;
    // The update may be in place (pOut == p, mOut == m).
    ZRT_VECTORIZE
    for (int64_t i = 0; i < n; ++i) {
      float grad = load(grads, i) * scale;
      float mix = m[i] * beta1 + grad * (1.0f - beta1);
      // torch.sign: +-1, and 0 (of its sign) or NaN as they are.
      float sign = mix > 0.0f ? 1.0f : mix < 0.0f ? -1.0f : mix;
      pOut[i] = p[i] * decay - rate * sign;
      mOut[i] = m[i] * beta2 + grad * (1.0f - beta2);
    }
  });
}
