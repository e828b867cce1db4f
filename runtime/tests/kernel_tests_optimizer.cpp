//===- kernel_tests_optimizer.cpp - AdamW, Lion, gradient norm, clipping --===//

#include "tests/kernel_tests.h"

#include <cmath>
#include <cstring>

namespace zrt {
namespace {

/// Five AdamW steps against a double scalar reference; with a bf16 gradient
/// and a grad_scale, or float32 and no scale (NULL).
void testAdamW(zrt_context *ctx, Checker &check, int32_t gradDtype,
               const float *gradScale) {
  const int64_t n = 29;
  // Not torch's defaults, so that a kernel reading the wrong slot shows.
  const float b1 = 0.8f, b2 = 0.95f, eps = 1e-6f, wd = 0.1f, lr = 1e-2f;
  const double scale = gradScale ? *gradScale : 1.0;
  auto p = randomVector(n);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  std::vector<float> pIn = p, mIn = m, vIn = v;
  std::vector<float> pOut(n), mOut(n), vOut(n);
  std::vector<double> pRef(p.begin(), p.end()), mRef(n, 0.0), vRef(n, 0.0);
  bool inPlaceSame = true;
  for (int t = 1; t <= 5; ++t) {
    auto g = representable(randomVector(n), gradDtype);
    Tensor gT(gradDtype, g);
    float step = (float)t;
    for (int64_t i = 0; i < n; ++i) {
      double grad = g[i] * scale;
      pRef[i] -= (double)lr * wd * pRef[i];
      mRef[i] = b1 * mRef[i] + (1.0 - b1) * grad;
      vRef[i] = b2 * vRef[i] + (1.0 - b2) * grad * grad;
      double mHat = mRef[i] / (1.0 - std::pow((double)b1, t));
      double vHat = vRef[i] / (1.0 - std::pow((double)b2, t));
      pRef[i] -= lr * mHat / (std::sqrt(vHat) + eps);
    }
    zrt_adamw(ctx, gradDtype, pIn.data(), gT.data(), mIn.data(), vIn.data(),
              pOut.data(), mOut.data(), vOut.data(), n, &lr, &step, gradScale,
              &b1, &b2, &eps, &wd);
    zrt_adamw(ctx, gradDtype, p.data(), gT.data(), m.data(), v.data(), p.data(),
              m.data(), v.data(), n, &lr, &step, gradScale, &b1, &b2, &eps,
              &wd);
    inPlaceSame &= p == pOut && m == mOut && v == vOut;
    pIn = pOut;
    mIn = mOut;
    vIn = vOut;
  }
  std::string name = std::string("adamw ") + dtypeName(gradDtype) +
                     " gradient" +
                     (gradScale ? ", grad_scale 0.37" : ", grad_scale NULL");
  check.expectClose(name + " 5 steps vs scalar reference",
                    maxError(p.data(), pRef.data(), n), 1e-6);
  check.expectTrue(name + " in place equals out of place", inPlaceSame);
}

/// Five Lion steps against a double scalar reference (lion-pytorch's
/// operations; the sign taken of the float32 interpolation, as the kernel
/// must), with the torch.sign edge cases: a zero interpolation moves the
/// parameter by its decay alone, a NaN gradient makes it NaN.
void testLion(zrt_context *ctx, Checker &check, int32_t gradDtype,
              const float *gradScale) {
  const int64_t n = 31;
  // Not lion-pytorch's defaults (1e-4, 0.9, 0.99, 0), so that a kernel
  // reading the wrong slot shows.
  const float b1 = 0.8f, b2 = 0.95f, wd = 0.1f, lr = 1e-2f;
  const float scale = gradScale ? *gradScale : 1.0f;
  auto p = randomVector(n);
  std::vector<float> m(n, 0.0f);
  std::vector<float> pIn = p, mIn = m, pOut(n), mOut(n);
  std::vector<double> pRef(p.begin(), p.end()), mRef(n, 0.0);
  bool inPlaceSame = true;
  for (int t = 1; t <= 5; ++t) {
    auto g = representable(randomVector(n), gradDtype);
    Tensor gT(gradDtype, g);
    for (int64_t i = 0; i < n; ++i) {
      float grad = g[i] * scale;
      float mix = m[i] * b1 + grad * (1.0f - b1);
      double sign = mix > 0 ? 1.0 : mix < 0 ? -1.0 : 0.0;
      pRef[i] = pRef[i] * (1.0 - (double)lr * wd) - lr * sign;
      mRef[i] = b2 * mRef[i] + (1.0 - b2) * (double)grad;
    }
    zrt_lion(ctx, gradDtype, pIn.data(), gT.data(), mIn.data(), pOut.data(),
             mOut.data(), n, &lr, gradScale, &b1, &b2, &wd);
    zrt_lion(ctx, gradDtype, p.data(), gT.data(), m.data(), p.data(), m.data(),
             n, &lr, gradScale, &b1, &b2, &wd);
    inPlaceSame &= p == pOut && m == mOut;
    pIn = pOut;
    mIn = mOut;
  }
  std::string name = std::string("lion ") + dtypeName(gradDtype) + " gradient" +
                     (gradScale ? ", grad_scale 0.37" : ", grad_scale NULL");
  check.expectClose(name + " 5 steps vs scalar reference",
                    std::max(maxError(p.data(), pRef.data(), n),
                             maxError(m.data(), mRef.data(), n)),
                    1e-6);
  check.expectTrue(name + " in place equals out of place", inPlaceSame);
}

void testLionSign(zrt_context *ctx, Checker &check) {
  const float lr = 0.5f, b1 = 0.9f, b2 = 0.99f, wd = 0.0f;
  float p[3] = {1.0f, 1.0f, 1.0f}, m[3] = {0.0f, 0.0f, 0.0f};
  const float g[3] = {0.0f, -2.0f, std::nanf("")};
  zrt_lion(ctx, ZRT_F32, p, g, m, p, m, 3, &lr, nullptr, &b1, &b2, &wd);
  check.expectTrue("lion sign(0) = 0 keeps the parameter, sign(-) = -1 "
                   "moves it by +lr, a NaN gradient gives NaN",
                   p[0] == 1.0f && p[1] == 1.5f && std::isnan(p[2]));
}

void testSumSquares(zrt_context *ctx, Checker &check, int32_t dtype) {
  const int64_t n = 1001;
  auto x = representable(randomVector(n, -3.0f, 3.0f), dtype);
  Tensor xT(dtype, x);
  double ref = 0.0;
  for (float v : x)
    ref += (double)v * v;
  float got = NAN;
  zrt_sum_squares(ctx, dtype, xT.data(), &got, n);
  // Accumulated in double and rounded once to float32, for both dtypes.
  check.expectClose(std::string("sum_squares ") + dtypeName(dtype),
                    maxError(&got, &ref, 1), 1e-6);
}

void testClipCoefficient(zrt_context *ctx, Checker &check) {
  struct Case {
    float totalSq, maxNorm;
    double expected;
  } cases[] = {
      {16.0f, 1.0f, 1.0 / (4.0 + 1e-6)}, // norm 4 > 1: scale down
      {0.25f, 1.0f, 1.0},                // norm 0.5 < 1: untouched
      {16.0f, 0.0f, 1.0},                // clipping disabled
      {16.0f, -1.0f, 1.0},               // disabled too
      {0.0f, 1.0f, 1.0},                 // zero gradient
  };
  double worst = 0.0;
  for (const Case &c : cases) {
    float coef = NAN;
    zrt_clip_coefficient(ctx, &c.totalSq, &c.maxNorm, &coef);
    worst = std::max(worst, maxError(&coef, &c.expected, 1));
  }
  check.expectClose("clip_coefficient (torch clip_grad_norm_)", worst, 1e-7);
}

} // namespace

void testOptimizer(zrt_context *ctx, Checker &check) {
  const float scale = 0.37f;
  testAdamW(ctx, check, ZRT_F32, nullptr);
  testAdamW(ctx, check, ZRT_F32, &scale);
  testAdamW(ctx, check, ZRT_BF16, &scale);
  testLion(ctx, check, ZRT_F32, nullptr);
  testLion(ctx, check, ZRT_F32, &scale);
  testLion(ctx, check, ZRT_BF16, &scale);
  testLionSign(ctx, check);
  for (int32_t dtype : kDtypes)
    testSumSquares(ctx, check, dtype);
  testClipCoefficient(ctx, check);
}

} // namespace zrt
