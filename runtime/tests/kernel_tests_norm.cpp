//===- kernel_tests_norm.cpp - LayerNorm, RMSNorm and embedding -----------===//

#include "tests/kernel_tests.h"

#include <cmath>

namespace zrt {
namespace {

constexpr int64_t kRows = 5, kCols = 16;
constexpr float kEps = 1e-5f;

/// Row-wise LayerNorm in double, biased variance as torch.
std::vector<double> layerNormRef(const std::vector<double> &x,
                                 const std::vector<double> &gamma,
                                 const std::vector<double> &beta) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < kRows; ++r) {
    const double *row = &x[r * kCols];
    double mean = 0, var = 0;
    for (int64_t c = 0; c < kCols; ++c)
      mean += row[c] / kCols;
    for (int64_t c = 0; c < kCols; ++c)
      var += (row[c] - mean) * (row[c] - mean) / kCols;
    for (int64_t c = 0; c < kCols; ++c)
      y[r * kCols + c] =
          (row[c] - mean) / std::sqrt(var + kEps) * gamma[c] + beta[c];
  }
  return y;
}

/// Row-wise RMSNorm in double, as HF's LlamaRMSNorm.
std::vector<double> rmsNormRef(const std::vector<double> &x,
                               const std::vector<double> &gamma) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < kRows; ++r) {
    const double *row = &x[r * kCols];
    double meanSq = 0;
    for (int64_t c = 0; c < kCols; ++c)
      meanSq += row[c] * row[c] / kCols;
    for (int64_t c = 0; c < kCols; ++c)
      y[r * kCols + c] = row[c] / std::sqrt(meanSq + kEps) * gamma[c];
  }
  return y;
}

std::vector<double> toDouble(const std::vector<float> &v) {
  return {v.begin(), v.end()};
}

/// The inputs of one norm test: rows offset from zero (LayerNorm must
/// subtract the mean) and gains near one.
struct NormInputs {
  std::vector<float> x, gamma, beta, dy;
  explicit NormInputs(int32_t dtype) {
    x = randomVector(kRows * kCols);
    for (int64_t i = 0; i < kRows * kCols; ++i)
      x[i] += 0.5f * (float)(i / kCols);
    x = representable(x, dtype);
    gamma = representable(randomVector(kCols, 0.5f, 1.5f), dtype);
    beta = representable(randomVector(kCols), dtype);
    dy = representable(randomVector(kRows * kCols), dtype);
  }
};

void expectClose(Checker &check, const std::string &name,
                 const std::vector<float> &got, const std::vector<double> &ref,
                 double tol) {
  check.expectClose(name, maxError(got.data(), ref.data(), (int64_t)got.size()),
                    tol);
}

void testLayerNorm(zrt_context *ctx, Checker &check, int32_t dtype) {
  const std::string suffix = std::string(" ") + dtypeName(dtype);
  const std::string name = "layer_norm" + suffix,
                    gradName = "layer_norm_grad" + suffix;
  const double tol = tolerance(dtype, 1e-5);
  NormInputs in(dtype);
  Tensor xT(dtype, in.x), gT(dtype, in.gamma), bT(dtype, in.beta);
  Tensor dyT(dtype, in.dy), yT(dtype, kRows * kCols);
  Tensor dxT(dtype, kRows * kCols), dgT(dtype, kCols), dbT(dtype, kCols);
  zrt_layer_norm(ctx, dtype, xT.data(), gT.data(), bT.data(), yT.data(), kRows,
                 kCols, kEps);
  auto g = toDouble(in.gamma), b = toDouble(in.beta), x = toDouble(in.x);
  expectClose(check, name, yT.values(), layerNormRef(x, g, b), tol);

  zrt_layer_norm_grad(ctx, dtype, xT.data(), gT.data(), dyT.data(), dxT.data(),
                      dgT.data(), dbT.data(), kRows, kCols, kEps);
  auto dxRef = referenceGradient(
      in.x, in.dy, [&](auto &xs) { return layerNormRef(xs, g, b); });
  auto dgRef = referenceGradient(
      in.gamma, in.dy, [&](auto &gs) { return layerNormRef(x, gs, b); });
  auto dbRef = referenceGradient(
      in.beta, in.dy, [&](auto &bs) { return layerNormRef(x, g, bs); });
  expectClose(check, gradName + " dx", dxT.values(), dxRef, tol);
  expectClose(check, gradName + " dgamma", dgT.values(), dgRef, tol);
  expectClose(check, gradName + " dbeta", dbT.values(), dbRef, tol);
  if (dtype != ZRT_F32)
    return;
  auto forward = [&]() {
    std::vector<float> y(kRows * kCols);
    zrt_layer_norm(ctx, ZRT_F32, in.x.data(), in.gamma.data(), in.beta.data(),
                   y.data(), kRows, kCols, kEps);
    return y;
  };
  auto fdX = finiteDifference(in.x, in.dy, forward);
  auto fdG = finiteDifference(in.gamma, in.dy, forward);
  auto fdB = finiteDifference(in.beta, in.dy, forward);
  double error =
      std::max({maxError(dxT.values().data(), fdX.data(), kRows * kCols),
                maxError(dgT.values().data(), fdG.data(), kCols),
                maxError(dbT.values().data(), fdB.data(), kCols)});
  check.expectClose("layer_norm_grad vs finite difference", error,
                    kFiniteDifferenceTolerance);
}

void testRmsNorm(zrt_context *ctx, Checker &check, int32_t dtype) {
  const std::string suffix = std::string(" ") + dtypeName(dtype);
  const std::string name = "rms_norm" + suffix,
                    gradName = "rms_norm_grad" + suffix;
  const double tol = tolerance(dtype, 1e-5);
  NormInputs in(dtype);
  Tensor xT(dtype, in.x), gT(dtype, in.gamma), dyT(dtype, in.dy);
  Tensor yT(dtype, kRows * kCols), dxT(dtype, kRows * kCols), dgT(dtype, kCols);
  zrt_rms_norm(ctx, dtype, xT.data(), gT.data(), yT.data(), kRows, kCols, kEps);
  auto g = toDouble(in.gamma), x = toDouble(in.x);
  expectClose(check, name, yT.values(), rmsNormRef(x, g), tol);

  zrt_rms_norm_grad(ctx, dtype, xT.data(), gT.data(), dyT.data(), dxT.data(),
                    dgT.data(), kRows, kCols, kEps);
  auto dxRef = referenceGradient(in.x, in.dy,
                                 [&](auto &xs) { return rmsNormRef(xs, g); });
  auto dgRef = referenceGradient(in.gamma, in.dy,
                                 [&](auto &gs) { return rmsNormRef(x, gs); });
  expectClose(check, gradName + " dx", dxT.values(), dxRef, tol);
  expectClose(check, gradName + " dgamma", dgT.values(), dgRef, tol);
  if (dtype != ZRT_F32)
    return;
  auto forward = [&]() {
    std::vector<float> y(kRows * kCols);
    zrt_rms_norm(ctx, ZRT_F32, in.x.data(), in.gamma.data(), y.data(), kRows,
                 kCols, kEps);
    return y;
  };
  auto fdX = finiteDifference(in.x, in.dy, forward);
  auto fdG = finiteDifference(in.gamma, in.dy, forward);
  double error =
      std::max(maxError(dxT.values().data(), fdX.data(), kRows * kCols),
               maxError(dgT.values().data(), fdG.data(), kCols));
  check.expectClose("rms_norm_grad vs finite difference", error,
                    kFiniteDifferenceTolerance);
}

} // namespace

void testNorms(zrt_context *ctx, Checker &check) {
  for (int32_t dtype : kDtypes) {
    testLayerNorm(ctx, check, dtype);
    testRmsNorm(ctx, check, dtype);
  }
}

// 20 ids over a vocabulary of 7: ids repeat (their rows must add up) and
// some rows are never used (their gradient must be zero, not left as is).
void testEmbedding(zrt_context *ctx, Checker &check) {
  const int64_t n = 20, vocab = 7, dim = 5;
  auto ids = randomInts(n, vocab - 2);
  for (int32_t dtype : kDtypes) {
    const std::string suffix = std::string(" ") + dtypeName(dtype);
    auto table = representable(randomVector(vocab * dim), dtype);
    auto dout = representable(randomVector(n * dim), dtype);
    Tensor tableT(dtype, table), outT(dtype, n * dim), doutT(dtype, dout);
    Tensor dtableT(dtype, vocab * dim);
    zrt_embedding(ctx, dtype, ids.data(), tableT.data(), outT.data(), n, vocab,
                  dim);
    auto lookup = [&](const std::vector<double> &t) {
      std::vector<double> out(n * dim);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < dim; ++c)
          out[i * dim + c] = t[ids[i] * dim + c];
      return out;
    };
    expectClose(check, "embedding" + suffix, outT.values(),
                lookup(toDouble(table)), 0.0);
    zrt_embedding_grad(ctx, dtype, ids.data(), doutT.data(), dtableT.data(), n,
                       vocab, dim);
    auto dtable = dtableT.values();
    expectClose(check, "embedding_grad" + suffix + " (repeated and unused ids)",
                dtable, referenceGradient(table, dout, lookup),
                tolerance(dtype, 1e-5));
    if (dtype != ZRT_F32)
      continue;
    auto fd = finiteDifference(table, dout, [&]() {
      std::vector<float> out(n * dim);
      zrt_embedding(ctx, ZRT_F32, ids.data(), table.data(), out.data(), n,
                    vocab, dim);
      return out;
    });
    check.expectClose("embedding_grad vs finite difference",
                      maxError(dtable.data(), fd.data(), vocab * dim),
                      kFiniteDifferenceTolerance);
  }
}

} // namespace zrt
