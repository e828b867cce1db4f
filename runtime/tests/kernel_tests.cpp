//===- kernel_tests.cpp - Every CPU kernel against a naive reference ------===//
//
// Also runs the checks of the allocator, init and data (core_checks.cpp).
// Single process, no MPI: kernels only need a context for its rank, so the
// tests use a local context and run without mpirun. References compute in
// double; tolerances are relative for values above 1, absolute below.
//
// `zrt-kernel-tests --fault=NAME` instead triggers one error path (bad-label,
// huge-alloc, bad-free) so lit can check the message and the exit code.
//
//===----------------------------------------------------------------------===//

#include "core/context.h"
#include "tests/checker.h"
#include "tests/core_checks.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace zrt;

namespace {

std::mt19937 rng(42);

std::vector<float> randomVector(int64_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

std::vector<int32_t> randomLabels(int64_t n, int32_t classes) {
  std::uniform_int_distribution<int32_t> dist(0, classes - 1);
  std::vector<int32_t> v(n);
  for (int32_t &x : v)
    x = dist(rng);
  return v;
}

// Stored a is m x k (k x m when transposed), b is k x n (n x k).
void testMatmul(zrt_context *ctx, Checker &check, int transA, int transB) {
  const int64_t m = 7, n = 9, k = 13;
  auto a = randomVector(m * k), b = randomVector(k * n);
  std::vector<float> c(m * n, NAN);
  zrt_matmul(ctx, a.data(), b.data(), c.data(), m, n, k, transA, transB);
  std::vector<double> ref(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) {
        double av = transA ? a[p * m + i] : a[i * k + p];
        double bv = transB ? b[j * k + p] : b[p * n + j];
        ref[i * n + j] += av * bv;
      }
  std::string name = std::string("matmul ") + (transA ? "T" : "N") +
                     (transB ? "T" : "N") + " 7x9x13";
  check.expectClose(name, maxError(c.data(), ref.data(), m * n), 1e-5);
}

void testBiasAndAdd(zrt_context *ctx, Checker &check) {
  const int64_t rows = 5, cols = 11;
  auto x = randomVector(rows * cols), bias = randomVector(cols);
  std::vector<float> y(rows * cols);
  std::vector<double> ref(rows * cols), sums(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      ref[r * cols + c] = (double)x[r * cols + c] + bias[c];
      sums[c] += x[r * cols + c];
    }
  zrt_bias_add(ctx, x.data(), bias.data(), y.data(), rows, cols);
  check.expectClose("bias_add", maxError(y.data(), ref.data(), y.size()), 1e-6);
  zrt_bias_add(ctx, x.data(), bias.data(), x.data(), rows, cols);
  check.expectClose("bias_add in place",
                    maxError(x.data(), ref.data(), x.size()), 1e-6);

  auto rowsIn = randomVector(rows * cols);
  std::vector<double> colSums(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      colSums[c] += rowsIn[r * cols + c];
  std::vector<float> got(cols, NAN);
  zrt_sum_rows(ctx, rowsIn.data(), got.data(), rows, cols);
  check.expectClose("sum_rows", maxError(got.data(), colSums.data(), cols),
                    1e-6);

  auto a = randomVector(37), b = randomVector(37);
  std::vector<double> sum(37);
  for (int i = 0; i < 37; ++i)
    sum[i] = (double)a[i] + b[i];
  zrt_add(ctx, a.data(), b.data(), a.data(), 37);
  check.expectClose("add in place", maxError(a.data(), sum.data(), 37), 1e-6);
}

void testRelu(zrt_context *ctx, Checker &check) {
  auto x = randomVector(41), dy = randomVector(41);
  std::vector<float> y(41), dx(41);
  std::vector<double> yRef(41), dxRef(41);
  for (int i = 0; i < 41; ++i) {
    yRef[i] = x[i] > 0 ? x[i] : 0.0;
    dxRef[i] = x[i] > 0 ? dy[i] : 0.0;
  }
  zrt_relu(ctx, x.data(), y.data(), 41);
  zrt_relu_grad(ctx, x.data(), dy.data(), dx.data(), 41);
  check.expectClose("relu", maxError(y.data(), yRef.data(), 41), 0.0);
  check.expectClose("relu_grad", maxError(dx.data(), dxRef.data(), 41), 0.0);
}

double geluRef(double x) {
  const double s = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(s * (x + 0.044715 * x * x * x)));
}

void testGelu(zrt_context *ctx, Checker &check) {
  const int64_t n = 53;
  auto x = randomVector(n, -4.0f, 4.0f), dy = randomVector(n);
  std::vector<float> y(n), dx(n);
  std::vector<double> yRef(n), dxFd(n);
  zrt_gelu(ctx, x.data(), y.data(), n);
  zrt_gelu_grad(ctx, x.data(), dy.data(), dx.data(), n);
  // Central differences of the float kernel itself: h = 1e-2 keeps float
  // rounding (~1e-7 / h) and truncation (~h^2) both near 1e-5.
  const float h = 1e-2f;
  for (int64_t i = 0; i < n; ++i) {
    yRef[i] = geluRef(x[i]);
    float xs[2] = {x[i] + h, x[i] - h}, ys[2];
    zrt_gelu(ctx, xs, ys, 2);
    dxFd[i] = dy[i] * ((double)ys[0] - ys[1]) / ((double)xs[0] - xs[1]);
  }
  check.expectClose("gelu", maxError(y.data(), yRef.data(), n), 1e-6);
  check.expectClose("gelu_grad vs finite difference",
                    maxError(dx.data(), dxFd.data(), n), 1e-4);
}

double xentRef(const std::vector<float> &logits,
               const std::vector<int32_t> &labels, int64_t rows, int64_t cols,
               double divisor) {
  double total = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    double max = logits[r * cols];
    for (int64_t c = 1; c < cols; ++c)
      max = std::max<double>(max, logits[r * cols + c]);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(logits[r * cols + c] - max);
    total += max + std::log(sum) - logits[r * cols + labels[r]];
  }
  return total / divisor;
}

void testSoftmaxXent(zrt_context *ctx, Checker &check) {
  const int64_t rows = 6, cols = 7;
  const float divisor = 12.0f, dloss = 2.5f;
  // Logits near 1000 would overflow exp without the max subtraction.
  auto logits = randomVector(rows * cols, -3.0f, 3.0f);
  for (int64_t c = 0; c < cols; ++c)
    logits[c] += 1000.0f;
  auto labels = randomLabels(rows, cols);
  float loss = NAN;
  zrt_softmax_xent(ctx, logits.data(), labels.data(), &loss, rows, cols,
                   divisor);
  double ref = xentRef(logits, labels, rows, cols, divisor);
  check.expectClose("softmax_xent (one row of logits near 1000)",
                    maxError(&loss, &ref, 1), 1e-6);

  std::vector<float> grad(rows * cols);
  std::vector<double> gradRef(rows * cols), gradFd(rows * cols);
  zrt_softmax_xent_grad(ctx, logits.data(), labels.data(), &dloss, grad.data(),
                        rows, cols, divisor);
  for (int64_t r = 0; r < rows; ++r) {
    double max = logits[r * cols], sum = 0.0;
    for (int64_t c = 1; c < cols; ++c)
      max = std::max<double>(max, logits[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(logits[r * cols + c] - max);
    for (int64_t c = 0; c < cols; ++c)
      gradRef[r * cols + c] =
          dloss *
          (std::exp(logits[r * cols + c] - max) / sum - (c == labels[r])) /
          divisor;
  }
  check.expectClose("softmax_xent_grad",
                    maxError(grad.data(), gradRef.data(), grad.size()), 1e-6);

  // Finite differences on rows away from 1000, where float keeps the
  // resolution: rounding ~1e-7 / h and truncation ~h^2 stay below 1e-4.
  const float h = 1e-2f;
  for (int64_t i = cols; i < rows * cols; ++i) {
    auto plus = logits, minus = logits;
    plus[i] += h;
    minus[i] -= h;
    float lp, lm;
    zrt_softmax_xent(ctx, plus.data(), labels.data(), &lp, rows, cols, divisor);
    zrt_softmax_xent(ctx, minus.data(), labels.data(), &lm, rows, cols,
                     divisor);
    gradFd[i] = dloss * ((double)lp - lm) / ((double)plus[i] - minus[i]);
  }
  check.expectClose(
      "softmax_xent_grad vs finite difference",
      maxError(grad.data() + cols, gradFd.data() + cols, (rows - 1) * cols),
      1e-4);
}

void testAdamW(zrt_context *ctx, Checker &check) {
  const int64_t n = 29;
  const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.1f, lr = 1e-2f;
  auto p = randomVector(n);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  std::vector<float> pIn = p, mIn = m, vIn = v;
  std::vector<float> pOut(n), mOut(n), vOut(n);
  std::vector<double> pRef(p.begin(), p.end()), mRef(n, 0.0), vRef(n, 0.0);
  bool inPlaceSame = true;
  for (int t = 1; t <= 5; ++t) {
    auto g = randomVector(n);
    float step = (float)t;
    for (int64_t i = 0; i < n; ++i) {
      pRef[i] -= (double)lr * wd * pRef[i];
      mRef[i] = b1 * mRef[i] + (1.0 - b1) * g[i];
      vRef[i] = b2 * vRef[i] + (1.0 - b2) * (double)g[i] * g[i];
      double mHat = mRef[i] / (1.0 - std::pow((double)b1, t));
      double vHat = vRef[i] / (1.0 - std::pow((double)b2, t));
      pRef[i] -= lr * mHat / (std::sqrt(vHat) + eps);
    }
    zrt_adamw(ctx, pIn.data(), g.data(), mIn.data(), vIn.data(), pOut.data(),
              mOut.data(), vOut.data(), n, &lr, &step, b1, b2, eps, wd);
    zrt_adamw(ctx, p.data(), g.data(), m.data(), v.data(), p.data(), m.data(),
              v.data(), n, &lr, &step, b1, b2, eps, wd);
    inPlaceSame &= std::memcmp(p.data(), pOut.data(), n * 4) == 0 &&
                   std::memcmp(m.data(), mOut.data(), n * 4) == 0;
    pIn = pOut;
    mIn = mOut;
    vIn = vOut;
  }
  check.expectClose("adamw 5 steps vs scalar reference",
                    maxError(p.data(), pRef.data(), n), 1e-6);
  check.expectTrue("adamw in place equals out of place", inPlaceSame);
}

void testCopyFillShard(Checker &check) {
  zrt_context *ctx = createLocalContext();
  auto src = randomVector(19);
  std::vector<float> dst(19), filled(23);
  zrt_copy(ctx, src.data(), dst.data(), 19 * sizeof(float));
  check.expectTrue("copy", dst == src);
  zrt_fill(ctx, filled.data(), 23, 0.5f);
  check.expectTrue("fill", filled == std::vector<float>(23, 0.5f));
  destroyContext(ctx);

  // numel 10 over 4 ranks: S = 3, rank 3 holds element 9 and two zeros.
  auto full = randomVector(10);
  bool ok = true;
  for (int r = 0; r < 4; ++r) {
    zrt_context *rankCtx = createLocalContext(r, 4);
    std::vector<float> shard(3, NAN);
    zrt_shard_slice(rankCtx, full.data(), shard.data(), 10, 3);
    for (int i = 0; i < 3; ++i)
      ok &= shard[i] == (r * 3 + i < 10 ? full[r * 3 + i] : 0.0f);
    destroyContext(rankCtx);
  }
  check.expectTrue("shard_slice 10 elements over 4 ranks, padded", ok);
}

int runFault(const std::string &fault) {
  zrt_context *ctx = createLocalContext();
  if (fault == "bad-label") {
    std::vector<float> logits(3 * 4, 0.0f), loss(1);
    std::vector<int32_t> labels = {0, 3, 4};
    zrt_softmax_xent(ctx, logits.data(), labels.data(), loss.data(), 3, 4,
                     3.0f);
  } else if (fault == "huge-alloc") {
    zrt_alloc(ctx, int64_t(1) << 60, ZRT_MEM_ACTIVATION);
  } else if (fault == "bad-free") {
    int notAllocated;
    zrt_free(ctx, &notAllocated);
  } else {
    std::fprintf(stderr, "unknown fault '%s'\n", fault.c_str());
    return 2;
  }
  std::printf("fault %s did not stop the program\n", fault.c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::strncmp(argv[1], "--fault=", 8) == 0)
    return runFault(argv[1] + 8);
  Checker check;
  zrt_context *ctx = createLocalContext();
  for (int transA = 0; transA < 2; ++transA)
    for (int transB = 0; transB < 2; ++transB)
      testMatmul(ctx, check, transA, transB);
  testBiasAndAdd(ctx, check);
  testRelu(ctx, check);
  testGelu(ctx, check);
  testSoftmaxXent(ctx, check);
  testAdamW(ctx, check);
  destroyContext(ctx);
  testCopyFillShard(check);
  checkAllocator(check);
  checkInitAndData(check);
  return check.finish();
}
