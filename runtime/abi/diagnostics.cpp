//===- diagnostics.cpp - zrt_watch_gradient (--check-finite) --------------===//
//
// Reading a gradient's squared norm back from the device after each
// parameter costs a synchronisation per parameter, so it happens only under
// --check-finite, a debugging flag. The driver clears the record before each
// step and, when the step's gradient norm is not finite, agrees with the
// other ranks on the first parameter (driver/driver.cpp).
//
//===----------------------------------------------------------------------===//

#include "core/context.h"

#include <cmath>

using namespace zrt;

extern "C" void zrt_watch_gradient(zrt_context *ctx, const float *sumSquares,
                                   const char *param) {
  GradientWatch &watch = ctx->gradientWatch;
  if (!watch.enabled)
    return;
  watch.params.push_back(param ? param : "?");
  if (watch.firstNonFinite >= 0)
    return;
  float value = 0;
  copyToHost(ctx, &value, sumSquares, sizeof(value));
  if (!std::isfinite(value))
    watch.firstNonFinite = (int64_t)watch.params.size() - 1;
}
