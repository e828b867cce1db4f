//===- attention.cpp - Causal grouped-query attention and its gradient ----===//
//
// Query rows are taken in tiles of kTileRows per (batch, head). A tile's
// scores against the keys it may see, [0, last row of the tile], are one
// cblas_sgemm, softmaxed row by row in float32 (two passes: max, then exp
// and sum), masked above the diagonal, and multiplied into V by a second
// sgemm. Memory is kTileRows x seq floats, never seq x seq, and the work is
// BLAS-speed: the per-row loops touch only the scores.
//
// The backward pass recomputes each tile's probabilities P (nothing is kept
// from the forward), then with dP = dO V^T and dS = P * (dP - rowsum(P*dP)):
//   dQ = scale dS K,  dK += scale dS^T Q,  dV += P^T dO,
// where the += gathers the query heads that share a kv head (GQA) and the
// tiles, in a fixed order.
//
// Both dtypes run the float32 code: bf16 tensors are widened once into
// float32 copies and the results rounded once (FloatInput, FloatOutput).
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <vector>

using namespace zrt;

namespace {

constexpr int64_t kTileRows = 64;

/// Shapes and row strides shared by the forward and the backward pass.
struct Layout {
  int64_t batch, seq, heads, kvHeads, headDim;
  int64_t qStride, kvStride; // floats between consecutive rows
  float scale;
  int64_t qNumel() const { return batch * seq * qStride; }
  int64_t kvNumel() const { return batch * seq * kvStride; }
  /// Offset of (batch b, row t, query head h) in q, out, dq.
  int64_t q(int64_t b, int64_t t, int64_t h) const {
    return (b * seq + t) * qStride + h * headDim;
  }
  /// Offset of (batch b, row t) in the kv head that query head h reads.
  int64_t kv(int64_t b, int64_t t, int64_t h) const {
    return (b * seq + t) * kvStride + h / (heads / kvHeads) * headDim;
  }
};

Layout makeLayout(const char *kernel, int64_t batch, int64_t seq, int64_t heads,
                  int64_t kvHeads, int64_t headDim) {
  if (batch < 0 || seq < 0 || heads <= 0 || kvHeads <= 0 || headDim <= 0 ||
      heads % kvHeads != 0)
    fatal("%s: invalid shape batch=%lld seq=%lld heads=%lld kv_heads=%lld "
          "head_dim=%lld (heads must be a multiple of kv_heads)",
          kernel, (long long)batch, (long long)seq, (long long)heads,
          (long long)kvHeads, (long long)headDim);
  // BLAS takes 32-bit sizes and leading dimensions.
  if (seq > INT_MAX || heads * headDim > INT_MAX)
    fatal("%s: seq=%lld or heads*head_dim=%lld exceeds BLAS's int", kernel,
          (long long)seq, (long long)(heads * headDim));
  float scale = 1.0f / std::sqrt((float)headDim);
  return Layout{
      batch, seq, heads, kvHeads, headDim, heads * headDim, kvHeads * headDim,
      scale};
}

/// Scores of query rows [t0, t0 + rows) of (b, h) against keys [0, keys),
/// turned into causal softmax probabilities in p (rows x keys, row-major).
void tileProbabilities(const Layout &l, const float *q, const float *k,
                       int64_t b, int64_t h, int64_t t0, int64_t rows,
                       int64_t keys, float *p) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)keys,
              (int)l.headDim, l.scale, q + l.q(b, t0, h), (int)l.qStride,
              k + l.kv(b, 0, h), (int)l.kvStride, 0.0f, p, (int)keys);
  for (int64_t i = 0; i < rows; ++i) {
    float *row = p + i * keys;
    int64_t visible = t0 + i + 1; // keys 0..t0+i
    float max = row[0];
    for (int64_t j = 1; j < visible; ++j)
      max = std::max(max, row[j]);
    // The exponentials in a loop of their own, which the compiler
    // vectorises (vmath::exp, within 1 ulp of libm's); the sum stays in
    // order.
    ZRT_VECTORIZE
    for (int64_t j = 0; j < visible; ++j)
      row[j] = vmath::exp(row[j] - max);
    float sum = 0.0f;
    for (int64_t j = 0; j < visible; ++j)
      sum += row[j];
    float inv = 1.0f / sum;
    for (int64_t j = 0; j < visible; ++j)
      row[j] *= inv;
    std::fill(row + visible, row + keys, 0.0f);
  }
}

void attentionForward(const Layout &l, const float *q, const float *k,
                      const float *v, float *out) {
  std::vector<float> p(kTileRows * l.seq);
  for (int64_t b = 0; b < l.batch; ++b)
    for (int64_t h = 0; h < l.heads; ++h)
      for (int64_t t0 = 0; t0 < l.seq; t0 += kTileRows) {
        int64_t rows = std::min(kTileRows, l.seq - t0), keys = t0 + rows;
        tileProbabilities(l, q, k, b, h, t0, rows, keys, p.data());
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows,
                    (int)l.headDim, (int)keys, 1.0f, p.data(), (int)keys,
                    v + l.kv(b, 0, h), (int)l.kvStride, 0.0f,
                    out + l.q(b, t0, h), (int)l.qStride);
      }
}

/// dP (rows x keys) becomes dS = P * (dP - rowsum(P * dP)).
void softmaxBackward(const float *p, float *dp, int64_t rows, int64_t keys) {
  for (int64_t i = 0; i < rows; ++i) {
    const float *pRow = p + i * keys;
    float *dRow = dp + i * keys;
    float dot = 0.0f;
    for (int64_t j = 0; j < keys; ++j)
      dot += pRow[j] * dRow[j];
    for (int64_t j = 0; j < keys; ++j)
      dRow[j] = pRow[j] * (dRow[j] - dot);
  }
}

void attentionBackward(const Layout &l, const float *q, const float *k,
                       const float *v, const float *dout, float *dq, float *dk,
                       float *dv) {
  std::fill(dk, dk + l.kvNumel(), 0.0f);
  std::fill(dv, dv + l.kvNumel(), 0.0f);
  std::vector<float> p(kTileRows * l.seq), ds(kTileRows * l.seq);
  const int ldq = (int)l.qStride, ldkv = (int)l.kvStride, d = (int)l.headDim;
  for (int64_t b = 0; b < l.batch; ++b)
    for (int64_t h = 0; h < l.heads; ++h)
      for (int64_t t0 = 0; t0 < l.seq; t0 += kTileRows) {
        int rows = (int)std::min(kTileRows, l.seq - t0), keys = (int)t0 + rows;
        tileProbabilities(l, q, k, b, h, t0, rows, keys, p.data());
        const float *doTile = dout + l.q(b, t0, h);
        const float *qTile = q + l.q(b, t0, h);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, d,
                    1.0f, doTile, ldq, v + l.kv(b, 0, h), ldkv, 0.0f, ds.data(),
                    keys);
        softmaxBackward(p.data(), ds.data(), rows, keys);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, d, keys,
                    l.scale, ds.data(), keys, k + l.kv(b, 0, h), ldkv, 0.0f,
                    dq + l.q(b, t0, h), ldq);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, keys, d, rows,
                    l.scale, ds.data(), keys, qTile, ldq, 1.0f,
                    dk + l.kv(b, 0, h), ldkv);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, keys, d, rows,
                    1.0f, p.data(), keys, doTile, ldq, 1.0f, dv + l.kv(b, 0, h),
                    ldkv);
      }
}

} // namespace

ZRT_CPU_CLONES void zrt::cpu::attention(zrt_context *, int32_t dtype, const void *q,
                         const void *k, const void *v, void *out, int64_t batch,
                         int64_t seq, int64_t heads, int64_t kvHeads,
                         int64_t headDim) {
  const char *kernel = "zrt_attention";
  Layout l = makeLayout(kernel, batch, seq, heads, kvHeads, headDim);
  FloatInput q32(kernel, dtype, q, l.qNumel());
  FloatInput k32(kernel, dtype, k, l.kvNumel());
  FloatInput v32(kernel, dtype, v, l.kvNumel());
  FloatOutput out32(kernel, dtype, out, l.qNumel());
  attentionForward(l, q32.get(), k32.get(), v32.get(), out32.get());
  out32.commit();
}

ZRT_CPU_CLONES void zrt::cpu::attentionGrad(zrt_context *, int32_t dtype, const void *q,
                             const void *k, const void *v, const void *dout,
                             void *dq, void *dk, void *dv, int64_t batch,
                             int64_t seq, int64_t heads, int64_t kvHeads,
                             int64_t headDim) {
  const char *kernel = "zrt_attention_grad";
  Layout l = makeLayout(kernel, batch, seq, heads, kvHeads, headDim);
  FloatInput q32(kernel, dtype, q, l.qNumel());
  FloatInput k32(kernel, dtype, k, l.kvNumel());
  FloatInput v32(kernel, dtype, v, l.kvNumel());
  FloatInput dout32(kernel, dtype, dout, l.qNumel());
  FloatOutput dq32(kernel, dtype, dq, l.qNumel());
  FloatOutput dk32(kernel, dtype, dk, l.kvNumel());
  FloatOutput dv32(kernel, dtype, dv, l.kvNumel());
  attentionBackward(l, q32.get(), k32.get(), v32.get(), dout32.get(),
                    dq32.get(), dk32.get(), dv32.get());
  dq32.commit();
  dk32.commit();
  dv32.commit();
}
