//===- kernel_tests_attention.cpp - RoPE and causal GQA attention ---------===//
//
// Attention is checked against the textbook form: the full T x T score
// matrix, masked and softmaxed in double. The shapes cover grouped-query
// heads (4 query heads on 2 kv heads, and on 1), plain multi-head, odd
// sequence lengths and one longer than the kernel's 64-row tiles.
//
//===----------------------------------------------------------------------===//

#include "tests/kernel_tests.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace zrt {
namespace {

struct RopeShape {
  int64_t batch, seq, heads, headDim;
  float theta;
  int64_t numel() const { return batch * seq * heads * headDim; }
  std::vector<float> invFreq() const {
    return ropeTestFrequencies(headDim, theta);
  }
};

/// HF Llama's apply_rotary_pos_emb in double, by `sign` times the angle.
std::vector<double> ropeRef(const RopeShape &s, const std::vector<double> &x,
                            double sign) {
  std::vector<double> y(x.size());
  const int64_t half = s.headDim / 2, width = s.heads * s.headDim;
  const std::vector<float> invFreq = s.invFreq();
  for (int64_t row = 0; row < s.batch * s.seq; ++row)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t i = 0; i < half; ++i) {
        double a = sign * (double)(row % s.seq) * (double)invFreq[i];
        int64_t lo = row * width + h * s.headDim + i, hi = lo + half;
        y[lo] = x[lo] * std::cos(a) - x[hi] * std::sin(a);
        y[hi] = x[hi] * std::cos(a) + x[lo] * std::sin(a);
      }
  return y;
}

void callRope(zrt_context *ctx, int32_t dtype, const RopeShape &s,
              const void *x, void *y, int inverse) {
  std::vector<float> invFreq = s.invFreq();
  zrt_rope(ctx, dtype, x, y, s.batch, s.seq, s.heads, s.headDim,
           invFreq.data(), inverse);
}

void testRopeDtype(zrt_context *ctx, Checker &check, int32_t dtype) {
  // Two sequences, so that the position restarts at row seq.
  const RopeShape s{2, 9, 3, 8, 10000.0f};
  const std::string name = std::string("rope ") + dtypeName(dtype);
  // Positions up to 8 with a float32 angle: ~1e-6 against the double angle.
  const double tol = tolerance(dtype, 1e-5);
  auto x = representable(randomVector(s.numel(), -2.0f, 2.0f), dtype);
  auto dy = representable(randomVector(s.numel()), dtype);
  std::vector<double> xd(x.begin(), x.end());
  Tensor xT(dtype, x), yT(dtype, s.numel()), dxT(dtype, s.numel());
  callRope(ctx, dtype, s, xT.data(), yT.data(), 0);
  auto y = yT.values();
  check.expectClose(name + " (HF rotate_half)",
                    maxError(y.data(), ropeRef(s, xd, 1).data(), s.numel()),
                    tol);
  Tensor dyT(dtype, dy);
  callRope(ctx, dtype, s, dyT.data(), dxT.data(), 1);
  auto dx = dxT.values();
  auto forwardRef = [&](const std::vector<double> &in) {
    return ropeRef(s, in, 1);
  };
  check.expectClose(name + " inverse is the gradient",
                    maxError(dx.data(),
                             referenceGradient(x, dy, forwardRef).data(),
                             s.numel()),
                    tol);
  callRope(ctx, dtype, s, xT.data(), xT.data(), 0);
  check.expectTrue(name + " in place", xT.values() == y);
  if (dtype != ZRT_F32)
    return;
  callRope(ctx, dtype, s, yT.data(), yT.data(), 1);
  check.expectClose("rope inverse(rope(x)) == x",
                    maxError(yT.values().data(), x.data(), s.numel()), 1e-6);
  auto fd = finiteDifference(x, dy, [&]() {
    std::vector<float> out(s.numel());
    callRope(ctx, ZRT_F32, s, x.data(), out.data(), 0);
    return out;
  });
  check.expectClose("rope inverse vs finite difference",
                    maxError(dx.data(), fd.data(), s.numel()),
                    kFiniteDifferenceTolerance);
}

struct AttnShape {
  int64_t batch, seq, heads, kvHeads, headDim;
  int64_t qNumel() const { return batch * seq * heads * headDim; }
  int64_t kvNumel() const { return batch * seq * kvHeads * headDim; }
  std::string str() const {
    char s[96];
    std::snprintf(s, sizeof(s), "b%lld t%lld h%lld kv%lld d%lld",
                  (long long)batch, (long long)seq, (long long)heads,
                  (long long)kvHeads, (long long)headDim);
    return s;
  }
};

/// Causal attention with the whole score matrix materialised, in double.
std::vector<double> attentionRef(const AttnShape &s,
                                 const std::vector<double> &q,
                                 const std::vector<double> &k,
                                 const std::vector<double> &v) {
  const int64_t T = s.seq, D = s.headDim, qw = s.heads * D, kvw = s.kvHeads * D;
  const double scale = 1.0 / std::sqrt((double)D);
  std::vector<double> out(s.qNumel(), 0.0), scores(T * T);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      int64_t g = h / (s.heads / s.kvHeads);
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += q[(b * T + i) * qw + h * D + d] *
                   k[(b * T + j) * kvw + g * D + d];
          scores[i * T + j] = j <= i ? dot * scale : -INFINITY;
        }
      for (int64_t i = 0; i < T; ++i) {
        double *row = &scores[i * T];
        double max = row[0], sum = 0;
        for (int64_t j = 1; j <= i; ++j)
          max = std::max(max, row[j]);
        for (int64_t j = 0; j < T; ++j)
          sum += row[j] = std::exp(row[j] - max);
        for (int64_t j = 0; j < T; ++j)
          for (int64_t d = 0; d < D; ++d)
            out[(b * T + i) * qw + h * D + d] +=
                row[j] / sum * v[(b * T + j) * kvw + g * D + d];
      }
    }
  return out;
}

void testAttentionShape(zrt_context *ctx, Checker &check, int32_t dtype,
                        const AttnShape &s, bool withFiniteDifference) {
  const std::string suffix =
      std::string(" ") + dtypeName(dtype) + " " + s.str();
  const double tol = tolerance(dtype, 1e-5);
  auto q = representable(randomVector(s.qNumel(), -2.0f, 2.0f), dtype);
  auto k = representable(randomVector(s.kvNumel(), -2.0f, 2.0f), dtype);
  auto v = representable(randomVector(s.kvNumel()), dtype);
  auto dout = representable(randomVector(s.qNumel()), dtype);
  Tensor qT(dtype, q), kT(dtype, k), vT(dtype, v), doutT(dtype, dout);
  Tensor outT(dtype, s.qNumel()), dqT(dtype, s.qNumel());
  Tensor dkT(dtype, s.kvNumel()), dvT(dtype, s.kvNumel());
  auto call = [&](int32_t dt, const void *qp, const void *kp, const void *vp,
                  void *out) {
    zrt_attention(ctx, dt, qp, kp, vp, out, s.batch, s.seq, s.heads, s.kvHeads,
                  s.headDim);
  };
  call(dtype, qT.data(), kT.data(), vT.data(), outT.data());
  std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end()),
      vd(v.begin(), v.end());
  check.expectClose("attention" + suffix,
                    maxError(outT.values().data(),
                             attentionRef(s, qd, kd, vd).data(), s.qNumel()),
                    tol);

  zrt_attention_grad(ctx, dtype, qT.data(), kT.data(), vT.data(), doutT.data(),
                     dqT.data(), dkT.data(), dvT.data(), s.batch, s.seq,
                     s.heads, s.kvHeads, s.headDim);
  auto dq = dqT.values(), dk = dkT.values(), dv = dvT.values();
  auto refQ = referenceGradient(
      q, dout, [&](auto &x) { return attentionRef(s, x, kd, vd); });
  auto refK = referenceGradient(
      k, dout, [&](auto &x) { return attentionRef(s, qd, x, vd); });
  auto refV = referenceGradient(
      v, dout, [&](auto &x) { return attentionRef(s, qd, kd, x); });
  check.expectClose("attention_grad" + suffix + " dq",
                    maxError(dq.data(), refQ.data(), s.qNumel()), tol);
  check.expectClose("attention_grad" + suffix + " dk",
                    maxError(dk.data(), refK.data(), s.kvNumel()), tol);
  check.expectClose("attention_grad" + suffix + " dv",
                    maxError(dv.data(), refV.data(), s.kvNumel()), tol);
  if (!withFiniteDifference || dtype != ZRT_F32)
    return;
  auto forward = [&]() {
    std::vector<float> out(s.qNumel());
    call(ZRT_F32, q.data(), k.data(), v.data(), out.data());
    return out;
  };
  auto fdQ = finiteDifference(q, dout, forward);
  auto fdK = finiteDifference(k, dout, forward);
  auto fdV = finiteDifference(v, dout, forward);
  double error = std::max({maxError(dq.data(), fdQ.data(), s.qNumel()),
                           maxError(dk.data(), fdK.data(), s.kvNumel()),
                           maxError(dv.data(), fdV.data(), s.kvNumel())});
  check.expectClose("attention_grad " + s.str() + " vs finite difference",
                    error, kFiniteDifferenceTolerance);
}

} // namespace

void testRope(zrt_context *ctx, Checker &check) {
  for (int32_t dtype : kDtypes)
    testRopeDtype(ctx, check, dtype);
}

void testAttention(zrt_context *ctx, Checker &check) {
  const AttnShape gqa{2, 7, 4, 2, 8}, mha{1, 5, 2, 2, 4}, mqa{1, 67, 2, 1, 4};
  for (int32_t dtype : kDtypes) {
    testAttentionShape(ctx, check, dtype, gqa, true);
    testAttentionShape(ctx, check, dtype, mha, true);
    testAttentionShape(ctx, check, dtype, mqa, false);
  }
}

void benchAttention(zrt_context *ctx) {
  const AttnShape s{4, 256, 12, 12, 64};
  for (int32_t dtype : kDtypes) {
    Tensor q(dtype, randomVector(s.qNumel())),
        k(dtype, randomVector(s.kvNumel()));
    Tensor v(dtype, randomVector(s.kvNumel())), out(dtype, s.qNumel());
    Tensor dq(dtype, s.qNumel()), dk(dtype, s.kvNumel()),
        dv(dtype, s.kvNumel());
    using Clock = std::chrono::steady_clock;
    auto t0 = Clock::now();
    zrt_attention(ctx, dtype, q.data(), k.data(), v.data(), out.data(), s.batch,
                  s.seq, s.heads, s.kvHeads, s.headDim);
    auto t1 = Clock::now();
    zrt_attention_grad(ctx, dtype, q.data(), k.data(), v.data(), out.data(),
                       dq.data(), dk.data(), dv.data(), s.batch, s.seq, s.heads,
                       s.kvHeads, s.headDim);
    auto t2 = Clock::now();
    std::printf("attention %s %s: forward %.3f s, backward %.3f s\n",
                dtypeName(dtype), s.str().c_str(),
                std::chrono::duration<double>(t1 - t0).count(),
                std::chrono::duration<double>(t2 - t1).count());
  }
}

} // namespace zrt
