//===- relu.cpp - ReLU forward and backward -------------------------------===//

#include "zero/zrt.h"

extern "C" void zrt_relu(zrt_context *, const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

extern "C" void zrt_relu_grad(zrt_context *, const float *x, const float *dy,
                              float *dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}
