//===- kernel_tests_matmul.cpp - matmuls and softmax cross-entropy --------===//

#include "tests/kernel_tests.h"

#include "core/bf16.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

namespace zrt {
namespace {

// Stored a is m x k (k x m when transposed), b is k x n (n x k).
void testMatmul(zrt_context *ctx, Checker &check, int32_t dtype, int transA,
                int transB, int64_t m, int64_t n, int64_t k) {
  auto a = representable(randomVector(m * k), dtype);
  auto b = representable(randomVector(k * n), dtype);
  Tensor aT(dtype, a), bT(dtype, b), cT(dtype, m * n);
  zrt_matmul(ctx, dtype, aT.data(), bT.data(), cT.data(), m, n, k, transA,
             transB);
  // float32 rounding of the sums grows with k.
  std::vector<double> ref(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) {
        double av = transA ? a[p * m + i] : a[i * k + p];
        double bv = transB ? b[j * k + p] : b[p * n + j];
        ref[i * n + j] += av * bv;
      }
  std::string name = std::string("matmul ") + dtypeName(dtype) + " " +
                     (transA ? "T" : "N") + (transB ? "T" : "N") + " " +
                     std::to_string(m) + "x" + std::to_string(n) + "x" +
                     std::to_string(k);
  check.expectClose(name, maxError(cT.values().data(), ref.data(), m * n),
                    tolerance(dtype, 1e-5 * std::max(1.0, k / 256.0)));
}

/// bf16 sums rounded once, ties to even, whichever bf16 GEMM runs: integer
/// operands whose sums float32 holds exactly, so the result must be the
/// exact sum rounded. Columns 0-2 sum to 257 and 259 (ties between bf16
/// neighbours 256 | 258 | 260) and 1100 at k = 1100 (1096 | 1104), the
/// deep k summed over several passes; a NaN in A stays NaN.
void testMatmulRounding(zrt_context *ctx, Checker &check, int64_t k) {
  const int64_t m = 3, n = 3;
  std::vector<float> a(m * k, 1.0f), b(k * n, 0.0f);
  b[0 * n + 0] = 256.0f, b[1 * n + 0] = 1.0f;      // 257 -> 256
  b[0 * n + 1] = 256.0f, b[1 * n + 1] = 3.0f;      // 259 -> 260
  for (int64_t p = 0; p < k; ++p)
    b[p * n + 2] = 1.0f;                           // k
  a[2 * k + 1] = NAN;                              // row 2: NaN everywhere
  Tensor aT(ZRT_BF16, a), bT(ZRT_BF16, b), cT(ZRT_BF16, m * n);
  zrt_matmul(ctx, ZRT_BF16, aT.data(), bT.data(), cT.data(), m, n, k, 0, 0);
  auto c = cT.values();
  bool exact = true;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p)
        sum += double(a[i * k + p]) * b[p * n + j];
      float rounded = bf16::widenToFloat(bf16::roundFromFloat(float(sum)));
      exact = exact && c[i * n + j] == rounded;
    }
  bool nan = std::isnan(c[2 * n]) && std::isnan(c[2 * n + 1]) &&
             std::isnan(c[2 * n + 2]);
  check.expectTrue("matmul bf16 rounds once, ties to even, k=" +
                       std::to_string(k),
                   exact && c[0] == 256.0f && c[1] == 260.0f);
  check.expectTrue("matmul bf16 keeps a NaN, k=" + std::to_string(k), nan);
}

/// zrt_matmul_bias against a double reference, and bit for bit against the
/// unfused calls it promises to equal on the CPU. n = 9 is not a multiple of
/// 8, the case the GPU handles apart.
void testMatmulBias(zrt_context *ctx, Checker &check, int32_t dtype, int transA,
                    int transB, int32_t epilogue) {
  const int64_t m = 7, n = 9, k = 13;
  bool gelu = epilogue == ZRT_EPILOGUE_BIAS_GELU;
  auto a = representable(randomVector(m * k), dtype);
  auto b = representable(randomVector(k * n), dtype);
  auto bias = representable(randomVector(n), dtype);
  Tensor aT(dtype, a), bT(dtype, b), biasT(dtype, bias), cT(dtype, m * n),
      preT(dtype, m * n);
  zrt_matmul_bias(ctx, dtype, aT.data(), bT.data(), biasT.data(), cT.data(),
                  gelu ? preT.data() : nullptr, m, n, k, transA, transB,
                  epilogue);
  std::vector<double> pre(m * n), out(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = bias[j];
      for (int64_t p = 0; p < k; ++p) {
        double av = transA ? a[p * m + i] : a[i * k + p];
        double bv = transB ? b[j * k + p] : b[p * n + j];
        sum += av * bv;
      }
      pre[i * n + j] = sum;
      out[i * n + j] = gelu ? geluRef(sum) : sum;
    }
  std::string name = std::string("matmul_bias") + (gelu ? "_gelu " : " ") +
                     dtypeName(dtype) + " " + (transA ? "T" : "N") +
                     (transB ? "T" : "N") + " 7x9x13";
  // bf16: the sum is rounded once more before the bias and before GELU.
  double tol = tolerance(dtype, 1e-5) * (dtype == ZRT_BF16 ? 2 : 1);
  check.expectClose(name, maxError(cT.values().data(), out.data(), m * n), tol);
  if (gelu)
    check.expectClose(name + " pre-activation",
                      maxError(preT.values().data(), pre.data(), m * n), tol);

  Tensor unfused(dtype, m * n), activated(dtype, m * n);
  zrt_matmul(ctx, dtype, aT.data(), bT.data(), unfused.data(), m, n, k, transA,
             transB);
  zrt_bias_add(ctx, dtype, unfused.data(), biasT.data(), unfused.data(), m, n);
  if (gelu)
    zrt_gelu(ctx, dtype, unfused.data(), activated.data(), m * n);
  check.expectTrue(name + " equals the unfused kernels",
                   cT.values() == (gelu ? activated : unfused).values() &&
                       (!gelu || preT.values() == unfused.values()));
}

/// Per-row softmax of `logits` in double.
std::vector<double> softmaxRef(const std::vector<float> &logits, int64_t rows,
                               int64_t cols) {
  std::vector<double> p(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = &logits[r * cols];
    double max = *std::max_element(row, row + cols), sum = 0.0;
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(row[c] - max);
    for (int64_t c = 0; c < cols; ++c)
      p[r * cols + c] = std::exp(row[c] - max) / sum;
  }
  return p;
}

double xentRef(const std::vector<float> &logits,
               const std::vector<int32_t> &labels, int64_t rows, int64_t cols,
               double divisor) {
  auto p = softmaxRef(logits, rows, cols);
  double total = 0.0;
  for (int64_t r = 0; r < rows; ++r)
    total -= std::log(p[r * cols + labels[r]]);
  return total / divisor;
}

void testSoftmaxXent(zrt_context *ctx, Checker &check, int32_t dtype) {
  const int64_t rows = 6, cols = 7;
  const float divisor = 12.0f, dloss = 2.5f;
  const std::string suffix = std::string(" ") + dtypeName(dtype);
  // Logits near 1000 would overflow exp without the max subtraction.
  auto logits = randomVector(rows * cols, -3.0f, 3.0f);
  for (int64_t c = 0; c < cols; ++c)
    logits[c] += 1000.0f;
  logits = representable(logits, dtype);
  auto labels = randomInts(rows, cols);
  Tensor logitsT(dtype, logits);
  float loss = NAN;
  zrt_softmax_xent(ctx, dtype, logitsT.data(), labels.data(), &loss, rows, cols,
                   divisor);
  double ref = xentRef(logits, labels, rows, cols, divisor);
  // The loss is float32 whatever the logits' dtype.
  check.expectClose("softmax_xent" + suffix + " (a row of logits near 1000)",
                    maxError(&loss, &ref, 1), 1e-6);

  Tensor gradT(dtype, rows * cols);
  zrt_softmax_xent_grad(ctx, dtype, logitsT.data(), labels.data(), &dloss,
                        gradT.data(), rows, cols, divisor);
  auto p = softmaxRef(logits, rows, cols);
  std::vector<double> gradRef(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      gradRef[r * cols + c] =
          dloss * (p[r * cols + c] - (c == labels[r])) / divisor;
  auto grad = gradT.values();
  check.expectClose("softmax_xent_grad" + suffix,
                    maxError(grad.data(), gradRef.data(), rows * cols),
                    tolerance(dtype, 1e-6));
  zrt_softmax_xent_grad(ctx, dtype, logitsT.data(), labels.data(), &dloss,
                        logitsT.data(), rows, cols, divisor);
  check.expectTrue("softmax_xent_grad" + suffix + " in place",
                   logitsT.values() == grad);

  // The fused kernel: the loss and the gradient of the two kernels above,
  // bit for bit, also writing the gradient over the logits.
  Tensor freshT(dtype, logits), fusedGradT(dtype, rows * cols);
  float fusedLoss = NAN;
  zrt_softmax_xent_fused(ctx, dtype, freshT.data(), labels.data(), &dloss,
                         &fusedLoss, fusedGradT.data(), rows, cols, divisor);
  check.expectTrue("softmax_xent_fused" + suffix + " = softmax_xent + grad",
                   fusedLoss == loss && fusedGradT.values() == grad);
  fusedLoss = NAN;
  zrt_softmax_xent_fused(ctx, dtype, freshT.data(), labels.data(), &dloss,
                         &fusedLoss, freshT.data(), rows, cols, divisor);
  check.expectTrue("softmax_xent_fused" + suffix + " in place",
                   fusedLoss == loss && freshT.values() == grad);
  if (dtype != ZRT_F32)
    return;

  // Finite differences on the rows away from 1000, where float keeps the
  // resolution.
  std::vector<float> tail(logits.begin() + cols, logits.end());
  std::vector<int32_t> tailLabels(labels.begin() + 1, labels.end());
  auto fd = finiteDifference(tail, {dloss}, [&]() {
    float l;
    zrt_softmax_xent(ctx, ZRT_F32, tail.data(), tailLabels.data(), &l, rows - 1,
                     cols, divisor);
    return std::vector<float>{l};
  });
  check.expectClose("softmax_xent_grad vs finite difference",
                    maxError(grad.data() + cols, fd.data(), (rows - 1) * cols),
                    kFiniteDifferenceTolerance);
}

} // namespace

void testMatmulAndLoss(zrt_context *ctx, Checker &check) {
  for (int32_t dtype : kDtypes) {
    for (int transA = 0; transA < 2; ++transA)
      for (int transB = 0; transB < 2; ++transB)
        // Inside one tile of the bf16 AMX path (16 x 16, 32 deep); over
        // several, with partial tiles at every edge; whole tiles only; and
        // partial tiles summed over several passes of 512 along k.
        for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{7, 9, 13},
                               {40, 50, 70},
                               {64, 48, 96},
                               {45, 37, 1100}})
          testMatmul(ctx, check, dtype, transA, transB, m, n, k);
    for (int32_t epilogue : {ZRT_EPILOGUE_BIAS, ZRT_EPILOGUE_BIAS_GELU})
      for (int transA = 0; transA < 2; ++transA)
        testMatmulBias(ctx, check, dtype, transA, /*transB=*/1 - transA,
                       epilogue);
    testSoftmaxXent(ctx, check, dtype);
  }
  for (int64_t k : {2, 1100})
    testMatmulRounding(ctx, check, k);
}

} // namespace zrt
