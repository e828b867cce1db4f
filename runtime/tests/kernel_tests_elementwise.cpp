//===- kernel_tests_elementwise.cpp - Elementwise kernels, copies, casts --===//

#include "tests/kernel_tests.h"

#include "cpu/vector_math.h"

#include <cmath>
#include <cstring>

namespace zrt {
namespace {

void testBiasAndAdd(zrt_context *ctx, Checker &check, int32_t dtype) {
  const int64_t rows = 5, cols = 11;
  const std::string suffix = std::string(" ") + dtypeName(dtype);
  const double tol = tolerance(dtype, 1e-6);
  auto x = representable(randomVector(rows * cols), dtype);
  auto bias = representable(randomVector(cols), dtype);
  std::vector<double> ref(rows * cols), colSums(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      ref[r * cols + c] = (double)x[r * cols + c] + bias[c];
      colSums[c] += x[r * cols + c];
    }
  Tensor xT(dtype, x), biasT(dtype, bias), yT(dtype, rows * cols);
  zrt_bias_add(ctx, dtype, xT.data(), biasT.data(), yT.data(), rows, cols);
  check.expectClose("bias_add" + suffix,
                    maxError(yT.values().data(), ref.data(), rows * cols), tol);
  Tensor sumsT(dtype, cols);
  zrt_sum_rows(ctx, dtype, xT.data(), sumsT.data(), rows, cols);
  check.expectClose("sum_rows" + suffix,
                    maxError(sumsT.values().data(), colSums.data(), cols), tol);
  zrt_bias_add(ctx, dtype, xT.data(), biasT.data(), xT.data(), rows, cols);
  check.expectClose("bias_add" + suffix + " in place",
                    maxError(xT.values().data(), ref.data(), rows * cols), tol);

  const int64_t n = 37;
  auto a = representable(randomVector(n), dtype);
  auto b = representable(randomVector(n), dtype);
  std::vector<double> sum(n);
  for (int64_t i = 0; i < n; ++i)
    sum[i] = (double)a[i] + b[i];
  Tensor aT(dtype, a), bT(dtype, b);
  zrt_add(ctx, dtype, aT.data(), bT.data(), aT.data(), n);
  check.expectClose("add" + suffix + " in place",
                    maxError(aT.values().data(), sum.data(), n), tol);
}

/// A unary activation and its gradient kernel, with a double reference.
struct Activation {
  const char *name;
  void (*forward)(zrt_context *, int32_t, const void *, void *, int64_t);
  void (*backward)(zrt_context *, int32_t, const void *, const void *, void *,
                   int64_t);
  double (*reference)(double);
  double f32Tolerance;
};

double reluRef(double x) { return x > 0 ? x : 0.0; }

// Inputs stay 0.05 away from 0, relu's kink, so finite differences see a
// smooth function.
void testActivation(zrt_context *ctx, Checker &check, const Activation &act,
                    int32_t dtype) {
  const int64_t n = 53;
  const std::string suffix = std::string(" ") + dtypeName(dtype);
  const std::string name = act.name + suffix;
  const std::string gradName = act.name + std::string("_grad") + suffix;
  auto x = randomVector(n, -4.0f, 4.0f);
  for (float &v : x)
    v = std::fabs(v) < 0.05f ? v + 0.1f : v;
  x = representable(x, dtype);
  auto dy = representable(randomVector(n), dtype);
  Tensor xT(dtype, x), dyT(dtype, dy), yT(dtype, n), dxT(dtype, n);
  act.forward(ctx, dtype, xT.data(), yT.data(), n);
  std::vector<double> ref(n);
  for (int64_t i = 0; i < n; ++i)
    ref[i] = act.reference(x[i]);
  check.expectClose(name, maxError(yT.values().data(), ref.data(), n),
                    tolerance(dtype, act.f32Tolerance));

  act.backward(ctx, dtype, xT.data(), dyT.data(), dxT.data(), n);
  // The derivative by central differences of the double reference (h tiny
  // enough that only double rounding remains).
  const double h = 1e-5;
  for (int64_t i = 0; i < n; ++i)
    ref[i] =
        dy[i] * (act.reference(x[i] + h) - act.reference(x[i] - h)) / (2 * h);
  auto dx = dxT.values();
  check.expectClose(gradName, maxError(dx.data(), ref.data(), n),
                    tolerance(dtype, 1e-5));
  act.backward(ctx, dtype, xT.data(), dyT.data(), dyT.data(), n);
  check.expectTrue(gradName + " in place (dx == dy)", dyT.values() == dx);
  if (dtype != ZRT_F32)
    return;
  auto fd = finiteDifference(x, dy, [&]() {
    std::vector<float> y(n);
    act.forward(ctx, ZRT_F32, x.data(), y.data(), n);
    return y;
  });
  check.expectClose(act.name + std::string("_grad vs finite difference"),
                    maxError(dx.data(), fd.data(), n),
                    kFiniteDifferenceTolerance);
}

double siluRef(double g) { return g / (1.0 + std::exp(-g)); }

void testSwiglu(zrt_context *ctx, Checker &check, int32_t dtype) {
  const int64_t n = 47;
  const std::string suffix = std::string(" ") + dtypeName(dtype);
  auto gate = representable(randomVector(n, -6.0f, 6.0f), dtype);
  auto up = representable(randomVector(n, -2.0f, 2.0f), dtype);
  auto dy = representable(randomVector(n), dtype);
  Tensor gateT(dtype, gate), upT(dtype, up), dyT(dtype, dy), yT(dtype, n);
  Tensor dgateT(dtype, n), dupT(dtype, n);
  zrt_swiglu(ctx, dtype, gateT.data(), upT.data(), yT.data(), n);
  zrt_swiglu_grad(ctx, dtype, gateT.data(), upT.data(), dyT.data(),
                  dgateT.data(), dupT.data(), n);
  std::vector<double> y(n), dgate(n), dup(n);
  const double h = 1e-5;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = siluRef(gate[i]) * up[i];
    dgate[i] =
        dy[i] * up[i] * (siluRef(gate[i] + h) - siluRef(gate[i] - h)) / (2 * h);
    dup[i] = dy[i] * siluRef(gate[i]);
  }
  const double tol = tolerance(dtype, 1e-5);
  check.expectClose("swiglu" + suffix,
                    maxError(yT.values().data(), y.data(), n), tol);
  check.expectClose("swiglu_grad" + suffix + " dgate",
                    maxError(dgateT.values().data(), dgate.data(), n), tol);
  check.expectClose("swiglu_grad" + suffix + " dup",
                    maxError(dupT.values().data(), dup.data(), n), tol);
  if (dtype != ZRT_F32)
    return;
  auto forward = [&]() {
    std::vector<float> out(n);
    zrt_swiglu(ctx, ZRT_F32, gate.data(), up.data(), out.data(), n);
    return out;
  };
  auto fdGate = finiteDifference(gate, dy, forward);
  auto fdUp = finiteDifference(up, dy, forward);
  check.expectClose("swiglu_grad vs finite difference",
                    std::max(maxError(dgateT.values().data(), fdGate.data(), n),
                             maxError(dupT.values().data(), fdUp.data(), n)),
                    kFiniteDifferenceTolerance);
}

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Rounding cases by bit pattern, independent of the runtime's converter.
void testCast(zrt_context *ctx, Checker &check) {
  struct Case {
    uint32_t in;
    uint16_t out;
  } cases[] = {
      {0x3f800000, 0x3f80}, // 1.0 exact
      {0x3f808000, 0x3f80}, // 1 + 2^-8: tie, rounds to even (down)
      {0x3f818000, 0x3f82}, // 1 + 3*2^-8: tie, rounds to even (up)
      {0x3f808001, 0x3f81}, // just above the tie: up
      {0xbf80ffff, 0xbf81}, // negative, above half: away from zero
      {0x7f7fffff, 0x7f80}, // largest float rounds to infinity
      {0xff800000, 0xff80}, // -inf
      {0x00000001, 0x0000}, // smallest subnormal rounds to zero
  };
  bool ok = true;
  for (const Case &c : cases) {
    float in = bitsFloat(c.in);
    uint16_t out = 0xdead;
    zrt_cast(ctx, ZRT_F32, ZRT_BF16, &in, &out, 1);
    ok &= out == c.out;
    float back = NAN;
    zrt_cast(ctx, ZRT_BF16, ZRT_F32, &out, &back, 1);
    ok &= floatBits(back) == (uint32_t)out << 16;
  }
  check.expectTrue("cast f32 -> bf16 rounds to nearest even, bf16 -> f32 exact",
                   ok);
  // A NaN whose payload is only in the low 16 bits must not become inf.
  float nans[2] = {bitsFloat(0x7f800001), bitsFloat(0xffc00000)};
  uint16_t out[2];
  zrt_cast(ctx, ZRT_F32, ZRT_BF16, nans, out, 2);
  auto isNan = [](uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f); };
  check.expectTrue("cast keeps NaN (and its sign)",
                   isNan(out[0]) && isNan(out[1]) && !(out[0] & 0x8000) &&
                       (out[1] & 0x8000));
  auto x = randomVector(9);
  std::vector<float> y(9);
  zrt_cast(ctx, ZRT_F32, ZRT_F32, x.data(), y.data(), 9);
  check.expectTrue("cast f32 -> f32 copies", x == y);
}

void testCopyFillShard(Checker &check, int32_t dtype) {
  const std::string suffix = std::string(" ") + dtypeName(dtype);
  zrt_context *ctx = createLocalContext();
  auto src = representable(randomVector(19), dtype);
  Tensor srcT(dtype, src), dstT(dtype, 19), filled(dtype, 23);
  zrt_copy(ctx, srcT.data(), dstT.data(), 19 * (dtype == ZRT_BF16 ? 2 : 4));
  check.expectTrue("copy" + suffix, dstT.values() == src);
  zrt_fill(ctx, dtype, filled.data(), 23, 0.5f);
  check.expectTrue("fill" + suffix,
                   filled.values() == std::vector<float>(23, 0.5f));
  destroyContext(ctx);

  // numel 10 over 4 ranks: S = 3, rank 3 holds element 9 and two zeros.
  auto full = representable(randomVector(10), dtype);
  Tensor fullT(dtype, full);
  bool ok = true;
  for (int r = 0; r < 4; ++r) {
    zrt_context *rankCtx = createLocalContext(r, 4);
    Tensor shardT(dtype, 3);
    zrt_shard_slice(rankCtx, dtype, fullT.data(), shardT.data(), 10, 3);
    auto shard = shardT.values();
    for (int i = 0; i < 3; ++i)
      ok &= shard[i] == (r * 3 + i < 10 ? full[r * 3 + i] : 0.0f);
    destroyContext(rankCtx);
  }
  check.expectTrue("shard_slice" + suffix + " 10 elements over 4 ranks, padded",
                   ok);
}

/// A column block out and back: slice_cols against direct indexing, and
/// slice_cols_grad placing the block in zeros.
void testSliceCols(zrt_context *ctx, Checker &check, int32_t dtype) {
  const int64_t rows = 3, cols = 13, offset = 4, size = 5;
  const std::string suffix = std::string(" ") + dtypeName(dtype);
  auto x = representable(randomVector(rows * cols), dtype);
  std::vector<double> block(rows * size), placed(rows * cols, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < size; ++c) {
      block[r * size + c] = x[r * cols + offset + c];
      placed[r * cols + offset + c] = x[r * cols + offset + c];
    }
  Tensor xT(dtype, x), yT(dtype, rows * size), backT(dtype, rows * cols);
  zrt_slice_cols(ctx, dtype, xT.data(), yT.data(), rows, cols, offset, size);
  check.expectClose("slice_cols" + suffix,
                    maxError(yT.values().data(), block.data(), rows * size),
                    0.0);
  zrt_slice_cols_grad(ctx, dtype, yT.data(), backT.data(), rows, cols, offset,
                      size);
  check.expectClose("slice_cols_grad" + suffix,
                    maxError(backT.values().data(), placed.data(), rows * cols),
                    0.0);
}

/// The kernels run the AVX-512 or AVX2 clone where the CPU has one
/// (ZRT_CPU_CLONES); this file is compiled for the baseline, where GCC has
/// no FMA to contract into. GELU's formula written out here must then give
/// the kernel's bits exactly: an FMA in a clone would not.
void testClonesKeepBaselineBits(zrt_context *ctx, Checker &check) {
  const int64_t n = 4099; // whole 16-lane vectors and a tail
  auto x = randomVector(n, -6.0f, 6.0f), dy = randomVector(n);
  std::vector<float> y(n), dx(n);
  zrt_gelu(ctx, ZRT_F32, x.data(), y.data(), n);
  zrt_gelu_grad(ctx, ZRT_F32, x.data(), dy.data(), dx.data(), n);
  const float sqrt2OverPi = 0.7978845608028654f, cubic = 0.044715f;
  bool same = true;
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    float s = vmath::sigmoid(2.0f * (sqrt2OverPi * (v + cubic * v * v * v)));
    float du = sqrt2OverPi * (1.0f + 3.0f * cubic * v * v);
    float forward = v * s;
    float backward = dy[i] * (s + 2.0f * v * s * (1.0f - s) * du);
    same &= std::memcmp(&forward, &y[i], sizeof(float)) == 0 &&
            std::memcmp(&backward, &dx[i], sizeof(float)) == 0;
  }
  check.expectTrue("gelu and gelu_grad f32 = the baseline's float operations "
                   "bit for bit, whichever clone runs",
                   same);
}

} // namespace

double geluRef(double x) {
  const double s = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(s * (x + 0.044715 * x * x * x)));
}

void testElementwise(zrt_context *ctx, Checker &check) {
  const Activation activations[] = {
      {"relu", zrt_relu, zrt_relu_grad, reluRef, 0.0},
      {"gelu", zrt_gelu, zrt_gelu_grad, geluRef, 1e-6},
  };
  for (int32_t dtype : kDtypes) {
    testBiasAndAdd(ctx, check, dtype);
    for (const Activation &act : activations)
      testActivation(ctx, check, act, dtype);
    testSwiglu(ctx, check, dtype);
    testSliceCols(ctx, check, dtype);
    testCopyFillShard(check, dtype);
  }
  testCast(ctx, check);
  testClonesKeepBaselineBits(ctx, check);
}

} // namespace zrt
