//===- add.cpp - Elementwise add (residuals, gradient accumulation) -------===//

#include "zero/zrt.h"

extern "C" void zrt_add(zrt_context *, const float *a, const float *b, float *y,
                        int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = a[i] + b[i];
}
