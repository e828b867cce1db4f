//===- attention_tc_kernels.cuh - bf16 tensor-core attention -*- CUDA -*-===//
//
// FlashAttention-2 on the tensor cores for bf16 tensors and head_dim D of 64
// or 128: the products Q K^T, P V (forward) and the five of the backward are
// mma.m16n8k16 with bf16 operands and float32 accumulation; the online
// softmax (running max m, running sum l, rescaling) stays in float32
// registers. P is rounded to bf16 for P V, and dS for dS K and dS^T Q, as
// FlashAttention does: those are the only roundings besides the inputs' own
// and the outputs'. attention_tc.cu launches these kernels; the host emulator
// (runtime/cuda/tests/emulation) compiles this same file as C++ to check them
// without a GPU, which is why the warp-level operations go through mma.cuh
// and the kernels use nothing else of CUDA beyond threadIdx, blockIdx,
// __syncthreads and uint4 loads.
//
// Layout: every kernel is a block of 4 warps; each warp owns 16 rows of the
// block's tile (query rows in the forward and dq kernels, key rows in the
// dk/dv kernel), so the rows' statistics never leave the warp. Tiles are
// staged in shared memory as bf16 rows of D + 8 elements: the 16-byte pad
// shifts consecutive rows by one 16-byte bank group, so the eight row
// addresses of an ldmatrix phase hit distinct banks. Fragments are read with
// ldmatrix: A operands and B = X^T operands (X's rows are the n index) as
// they are stored, B = X operands (X's rows are the k index) with .trans.
// Products that feed a second product (P, dS) go from the accumulator
// layout to the A layout in registers (the two layouts agree on which lane
// holds which row and columns), never through shared memory.
//
// Scores are kept in log2 units, s * scale * log2(e), so that exp2 is the
// only exponential; the backward's statistic L is in the same units.
//
// The causal mask and the end of the sequence are applied element by
// element (key j visible to query i iff j <= i and j < seq); rows past the
// end of the sequence are computed on zero-filled tiles and never stored.
// The first key tile holds key 0, which every row sees, so the running max
// is finite after it and no exp2(-inf - -inf) arises.
//
// Backward (see attention.cu for why three kernels): the forward in stats
// mode stores L = m + log2(l) and Delta = dO . O per query row; the dk/dv
// kernel owns a tile of keys and loops over the query heads of its GQA group
// and the query tiles at or after it, accumulating dV += P^T dO and
// dK += dS^T Q in registers; the dq kernel owns a tile of queries and loops
// over the key tiles up to the diagonal, dQ += dS K. Every output element is
// summed by one thread in a fixed order: deterministic, no atomics.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_ATTENTION_TC_KERNELS_CUH
#define ZRT_CUDA_ATTENTION_TC_KERNELS_CUH

#include "cuda/mma.cuh"

#include <cmath>
#include <cstdint>

namespace zrt::cuda::tc {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
/// Rows a warp owns: the M of one mma.
constexpr int kWarpRows = 16;
/// Query rows per block (forward, dq) and key rows per block (dk/dv).
constexpr int kBlockRows = kWarps * kWarpRows;
/// Keys per tile of the forward and dq loops.
constexpr int kKeyTile = 64;

/// Query rows per tile of the dk/dv loop: fewer at D = 128, where the dK and
/// dV accumulators already take 128 registers a thread.
template <int D> __host__ __device__ constexpr int dkdvQueryTile() {
  return D >= 128 ? 32 : 64;
}
/// bf16 elements per shared-memory row (see the file comment).
template <int D> __host__ __device__ constexpr int smemStride() {
  return D + 8;
}

template <int D> __host__ __device__ constexpr int forwardSmemBytes() {
  return (kBlockRows + 2 * kKeyTile) * smemStride<D>() * 2;
}
template <int D> __host__ __device__ constexpr int dqSmemBytes() {
  return (2 * kBlockRows + 2 * kKeyTile) * smemStride<D>() * 2;
}
template <int D> __host__ __device__ constexpr int dkdvSmemBytes() {
  return (2 * kBlockRows + 2 * dkdvQueryTile<D>()) * smemStride<D>() * 2 +
         2 * dkdvQueryTile<D>() * 4;
}

/// Shapes and strides, by value to every kernel.
struct Params {
  int64_t batch, seq, heads, kvHeads;
  int64_t group;    // heads / kvHeads
  int64_t qStride;  // elements between rows of q, out, dout, dq
  int64_t kvStride; // elements between rows of k, v, dk, dv
  float scale;      // 1 / sqrt(D)
  float scaleLog2;  // scale * log2(e)
};

/// Host side: the parameters of a call (heads a multiple of kvHeads, D the
/// head_dim the kernels are instantiated for).
inline Params makeParams(int64_t batch, int64_t seq, int64_t heads,
                         int64_t kvHeads, int D) {
  const float scale = 1.0f / std::sqrt((float)D);
  return Params{batch,
                seq,
                heads,
                kvHeads,
                heads / kvHeads,
                heads * D,
                kvHeads * D,
                scale,
                scale * 1.4426950408889634f};
}

/// Host side: blocks of each grid (1-D: forwardKernel and dqKernel take
/// (tile, batch, head) from blockIdx.x, dkdvKernel (tile, batch, kv head)).
inline int64_t rowTiles(const Params &p) {
  return (p.seq + kBlockRows - 1) / kBlockRows;
}
inline int64_t queryBlocks(const Params &p) {
  return rowTiles(p) * p.batch * p.heads;
}
inline int64_t keyBlocks(const Params &p) {
  return rowTiles(p) * p.batch * p.kvHeads;
}

//===--- Tiles and fragments ----------------------------------------------===//

/// Rows [t0, t0 + rows) of one head (columns [colOffset, colOffset + D)) of a
/// row-major bf16 tensor into shared memory, 16 bytes a thread at a time;
/// rows at or past `seq` are zero. The global addresses are 16-byte aligned
/// (attention_tc.cu checks the base pointers; D and the strides are
/// multiples of 8 elements).
template <int D>
__device__ __forceinline__ void
loadTile(Bf16 *dst, int rows, const Bf16 *src, int64_t stride, int64_t rowBase,
         int64_t t0, int64_t seq, int64_t colOffset) {
  constexpr int kChunks = D / 8;
  for (int idx = threadIdx.x; idx < rows * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c = idx % kChunks;
    const int64_t t = t0 + r;
    uint4 x = {0u, 0u, 0u, 0u};
    if (t < seq)
      x = *reinterpret_cast<const uint4 *>(src + (rowBase + t) * stride +
                                           colOffset + c * 8);
    *reinterpret_cast<uint4 *>(dst + r * smemStride<D>() + c * 8) = x;
  }
}

/// The A fragment of the 16 x 16 block at (row0, col0) of a row-major tile.
template <int D>
__device__ __forceinline__ void loadA(uint32_t (&a)[4], const Bf16 *tile,
                                      int row0, int col0, int lane) {
  const int r = row0 + lane % 8 + (lane / 8) % 2 * 8;
  const int c = col0 + lane / 16 * 8;
  ldmatrixX4(a, tile + r * smemStride<D>() + c);
}

/// B fragments of B = X^T for X a row-major tile whose rows are B's columns:
/// k in [k0, k0 + 16), columns n0..n0+7 in b[0..1], n0+8..n0+15 in b[2..3].
template <int D>
__device__ __forceinline__ void
loadBTransposed(uint32_t (&b)[4], const Bf16 *tile, int n0, int k0, int lane) {
  const int r = n0 + lane % 8 + lane / 16 * 8;
  const int c = k0 + (lane / 8) % 2 * 8;
  ldmatrixX4(b, tile + r * smemStride<D>() + c);
}

/// B fragments of B = X for X a row-major tile whose rows are B's k index:
/// k in [k0, k0 + 16), columns n0..n0+7 in b[0..1], n0+8..n0+15 in b[2..3].
template <int D>
__device__ __forceinline__ void loadB(uint32_t (&b)[4], const Bf16 *tile,
                                      int k0, int n0, int lane) {
  const int r = k0 + lane % 8 + (lane / 8) % 2 * 8;
  const int c = n0 + lane / 16 * 8;
  ldmatrixX4Trans(b, tile + r * smemStride<D>() + c);
}

/// acc[n] += A B_n over the N / 8 column blocks of 8 and the D / 16 k steps,
/// A = rows [row0, row0 + 16) of `a` (row-major, D columns), B = X^T with X
/// rows [0, N) of `x`: the warp's 16 x N block of a x^T.
template <int D, int N>
__device__ __forceinline__ void multiplyABt(float (&acc)[N / 8][4],
                                            const Bf16 *a, int row0,
                                            const Bf16 *x, int lane) {
#pragma unroll
  for (int n = 0; n < N / 8; ++n)
    acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
#pragma unroll
  for (int k = 0; k < D; k += 16) {
    uint32_t af[4];
    loadA<D>(af, a, row0, k, lane);
#pragma unroll
    for (int n = 0; n < N; n += 16) {
      uint32_t bf[4];
      loadBTransposed<D>(bf, x, n, k, lane);
      mmaBf16(acc[n / 8], af, bf[0], bf[1]);
      mmaBf16(acc[n / 8 + 1], af, bf[2], bf[3]);
    }
  }
}

/// acc[n] += W X: W is the warp's 16 x K weights, in accumulator layout
/// (w[j] covers columns 8j..8j+7), rounded to bf16 here; X is rows [0, K) of
/// a row-major tile of D columns.
template <int D, int K>
__device__ __forceinline__ void multiplyWX(float (&acc)[D / 8][4],
                                           const float (&w)[K / 8][4],
                                           const Bf16 *x, int lane) {
#pragma unroll
  for (int k = 0; k < K; k += 16) {
    // The accumulator layout of columns k..k+15 is the A layout of one k
    // step: a0/a1 from block k/8 (columns 2t, 2t+1), a2/a3 from k/8 + 1.
    const float(&lo)[4] = w[k / 8];
    const float(&hi)[4] = w[k / 8 + 1];
    const uint32_t af[4] = {packBf16x2(lo[0], lo[1]), packBf16x2(lo[2], lo[3]),
                            packBf16x2(hi[0], hi[1]), packBf16x2(hi[2], hi[3])};
#pragma unroll
    for (int n = 0; n < D; n += 16) {
      uint32_t bf[4];
      loadB<D>(bf, x, k, n, lane);
      mmaBf16(acc[n / 8], af, bf[0], bf[1]);
      mmaBf16(acc[n / 8 + 1], af, bf[2], bf[3]);
    }
  }
}

/// Sum over the four lanes that share a row in the accumulator layout.
__device__ __forceinline__ float quadSum(float x) {
  x += shflXor(x, 1);
  return x + shflXor(x, 2);
}
__device__ __forceinline__ float quadMax(float x) {
  x = fmaxf(x, shflXor(x, 1));
  return fmaxf(x, shflXor(x, 2));
}

/// Stores the warp's 16 x D accumulator block times `scale` as bf16 rows
/// row0 (lane's rows row0 + g and row0 + g + 8) of a row-major tensor,
/// skipping rows at or past `seq`.
template <int D>
__device__ __forceinline__ void
storeRows(Bf16 *dst, const float (&acc)[D / 8][4], const float (&scale)[2],
          int64_t stride, int64_t rowBase, int64_t row0, int64_t seq,
          int64_t colOffset, int lane) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t i = row0 + g + 8 * half;
    if (i >= seq)
      continue;
    uint32_t *row = reinterpret_cast<uint32_t *>(dst + (rowBase + i) * stride +
                                                 colOffset + 2 * t);
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      row[4 * n] = packBf16x2(acc[n][2 * half] * scale[half],
                              acc[n][2 * half + 1] * scale[half]);
  }
}

//===--- Forward (and the backward's statistics) --------------------------===//

/// What one block of forwardKernel or dqKernel works on: batch b, head h
/// and its KV head, the tile's first query row q0 (the last tiles, which see
/// the most keys, go to the first blocks), the token offset of the batch
/// entry, the warp's first row, and the two query rows (g and g + 8 of the
/// warp's 16) whose accumulators this lane holds.
struct QueryTile {
  int64_t b, h, kvh, q0, rowBase, warpRow0;
  int64_t rows[2];
};

__device__ __forceinline__ QueryTile queryTile(const Params &p, int warp,
                                               int g) {
  const int64_t block = blockIdx.x, bh = block % (p.batch * p.heads);
  const int64_t numQueryTiles = (p.seq + kBlockRows - 1) / kBlockRows;
  const int64_t qt = numQueryTiles - 1 - block / (p.batch * p.heads);
  QueryTile tile;
  tile.b = bh / p.heads;
  tile.h = bh % p.heads;
  tile.kvh = tile.h / p.group;
  tile.q0 = qt * kBlockRows;
  tile.rowBase = tile.b * p.seq;
  tile.warpRow0 = tile.q0 + warp * kWarpRows;
  tile.rows[0] = tile.warpRow0 + g;
  tile.rows[1] = tile.warpRow0 + g + 8;
  return tile;
}

/// Stats == false: out = softmax(q k^T scale, causal) v. Stats == true: per
/// query row (index (b * heads + h) * seq + t), lse = m + log2(l) in log2
/// units and delta = dO . O; out unused. One block per (batch, head, tile of
/// 64 query rows), the last tiles (the most keys) first.
template <int D, bool Stats>
__global__ void __launch_bounds__(kThreads)
    forwardKernel(Params p, const Bf16 *__restrict__ q,
                  const Bf16 *__restrict__ k, const Bf16 *__restrict__ v,
                  Bf16 *__restrict__ out, const Bf16 *__restrict__ dout,
                  float *__restrict__ lse, float *__restrict__ delta) {
  constexpr int S = smemStride<D>();
  Bf16 *qs = dynamicSmem<Bf16>(); // [kBlockRows][S]
  Bf16 *ks = qs + kBlockRows * S; // [kKeyTile][S]
  Bf16 *vs = ks + kKeyTile * S;   // [kKeyTile][S]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const QueryTile tile = queryTile(p, warp, g);
  const int64_t b = tile.b, h = tile.h, kvh = tile.kvh, q0 = tile.q0;
  const int64_t rowBase = tile.rowBase, warpRow0 = tile.warpRow0;
  const int64_t rows[2] = {tile.rows[0], tile.rows[1]};

  loadTile<D>(qs, kBlockRows, q, p.qStride, rowBase, q0, p.seq, h * D);

  float o[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
    o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  // m: the row's running max (log2 units), l: this lane's share of the
  // running sum (its 16 keys of each tile; the quad's sum at the end).
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

  const int64_t keyEnd = q0 + kBlockRows < p.seq ? q0 + kBlockRows : p.seq;
  for (int64_t k0 = 0; k0 < keyEnd; k0 += kKeyTile) {
    __syncthreads(); // the previous tile's K and V are no longer read
    loadTile<D>(ks, kKeyTile, k, p.kvStride, rowBase, k0, p.seq, kvh * D);
    loadTile<D>(vs, kKeyTile, v, p.kvStride, rowBase, k0, p.seq, kvh * D);
    __syncthreads();

    float s[kKeyTile / 8][4];
    multiplyABt<D, kKeyTile>(s, qs, warp * kWarpRows, ks, lane);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float tileMax = -INFINITY;
#pragma unroll
      for (int n = 0; n < kKeyTile / 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int64_t j = k0 + 8 * n + 2 * t + e;
          float &x = s[n][2 * half + e];
          x = j <= rows[half] && j < p.seq ? x * p.scaleLog2 : -INFINITY;
          tileMax = fmaxf(tileMax, x);
        }
      const float mNew = fmaxf(m[half], quadMax(tileMax));
      // Defensive: a row with nothing visible keeps m = -inf; exponentiate
      // against 0 then, so every term is exp2(-inf) = 0 rather than NaN.
      const float base = mNew == -INFINITY ? 0.0f : mNew;
      const float correction = exp2f(m[half] - base);
      float sum = 0.0f;
#pragma unroll
      for (int n = 0; n < kKeyTile / 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float &x = s[n][2 * half + e];
          x = exp2f(x - base);
          sum += x;
        }
      l[half] = l[half] * correction + sum;
      m[half] = mNew;
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        o[n][2 * half] *= correction;
        o[n][2 * half + 1] *= correction;
      }
    }
    multiplyWX<D, kKeyTile>(o, s, vs, lane);
  }

  // Every real row sees key 0, so l >= 1 there.
  float inv[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    l[half] = quadSum(l[half]);
    inv[half] = 1.0f / l[half];
  }
  if constexpr (!Stats) {
    storeRows<D>(out, o, inv, p.qStride, rowBase, warpRow0, p.seq, h * D, lane);
  } else {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int64_t i = rows[half];
      float dot = 0.0f;
      if (i < p.seq) {
        const uint32_t *dRow = reinterpret_cast<const uint32_t *>(
            dout + (rowBase + i) * p.qStride + h * D + 2 * t);
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
          const uint32_t pair = dRow[4 * n];
          dot += lowBf16(pair) * o[n][2 * half] +
                 highBf16(pair) * o[n][2 * half + 1];
        }
      }
      // Every lane of the quad takes part, in or past the sequence.
      dot = quadSum(dot) * inv[half];
      if (i < p.seq && t == 0) {
        const int64_t row = (b * p.heads + h) * p.seq + i;
        lse[row] = m[half] + log2f(l[half]);
        delta[row] = dot;
      }
    }
  }
}

//===--- Backward ---------------------------------------------------------===//

/// dq = scale * sum_j dS_ij k_j, dS = P (dO . v - Delta), P = exp2(s - L).
/// One block per (batch, head, tile of 64 query rows), last tiles first.
template <int D>
__global__ void __launch_bounds__(kThreads)
    dqKernel(Params p, const Bf16 *__restrict__ q, const Bf16 *__restrict__ k,
             const Bf16 *__restrict__ v, const Bf16 *__restrict__ dout,
             const float *__restrict__ lse, const float *__restrict__ delta,
             Bf16 *__restrict__ dq) {
  constexpr int S = smemStride<D>();
  Bf16 *qs = dynamicSmem<Bf16>();  // [kBlockRows][S]
  Bf16 *dos = qs + kBlockRows * S; // [kBlockRows][S]
  Bf16 *ks = dos + kBlockRows * S; // [kKeyTile][S]
  Bf16 *vs = ks + kKeyTile * S;    // [kKeyTile][S]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const QueryTile tile = queryTile(p, warp, g);
  const int64_t b = tile.b, h = tile.h, kvh = tile.kvh, q0 = tile.q0;
  const int64_t rowBase = tile.rowBase, warpRow0 = tile.warpRow0;
  const int64_t rows[2] = {tile.rows[0], tile.rows[1]};

  loadTile<D>(qs, kBlockRows, q, p.qStride, rowBase, q0, p.seq, h * D);
  loadTile<D>(dos, kBlockRows, dout, p.qStride, rowBase, q0, p.seq, h * D);
  float L[2], Delta[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t row = (b * p.heads + h) * p.seq + rows[half];
    L[half] = rows[half] < p.seq ? lse[row] : 0.0f;
    Delta[half] = rows[half] < p.seq ? delta[row] : 0.0f;
  }

  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
    acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;

  const int64_t keyEnd = q0 + kBlockRows < p.seq ? q0 + kBlockRows : p.seq;
  for (int64_t k0 = 0; k0 < keyEnd; k0 += kKeyTile) {
    __syncthreads();
    loadTile<D>(ks, kKeyTile, k, p.kvStride, rowBase, k0, p.seq, kvh * D);
    loadTile<D>(vs, kKeyTile, v, p.kvStride, rowBase, k0, p.seq, kvh * D);
    __syncthreads();

    float s[kKeyTile / 8][4], dp[kKeyTile / 8][4];
    multiplyABt<D, kKeyTile>(s, qs, warp * kWarpRows, ks, lane);
    multiplyABt<D, kKeyTile>(dp, dos, warp * kWarpRows, vs, lane);
#pragma unroll
    for (int n = 0; n < kKeyTile / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int half = e / 2;
        const int64_t i = rows[half], j = k0 + 8 * n + 2 * t + e % 2;
        const float pij =
            i < p.seq && j <= i ? exp2f(s[n][e] * p.scaleLog2 - L[half]) : 0.0f;
        s[n][e] = pij * (dp[n][e] - Delta[half]); // dS
      }
    multiplyWX<D, kKeyTile>(acc, s, ks, lane);
  }

  const float scale[2] = {p.scale, p.scale};
  storeRows<D>(dq, acc, scale, p.qStride, rowBase, warpRow0, p.seq, h * D,
               lane);
}

/// dv = sum_i P_ij dO_i and dk = scale * sum_i dS_ij q_i over the query rows
/// i >= j of every query head of the kv head's group. One block per (batch,
/// kv head, tile of 64 keys), first tiles (the most queries) first. The
/// products are the transposed ones: S^T = K Q^T and dP^T = V dO^T put the
/// keys on the warp's rows, so P^T and dS^T are already A operands.
template <int D>
__global__ void __launch_bounds__(kThreads)
    dkdvKernel(Params p, const Bf16 *__restrict__ q, const Bf16 *__restrict__ k,
               const Bf16 *__restrict__ v, const Bf16 *__restrict__ dout,
               const float *__restrict__ lse, const float *__restrict__ delta,
               Bf16 *__restrict__ dk, Bf16 *__restrict__ dv) {
  constexpr int S = smemStride<D>();
  constexpr int Bq = dkdvQueryTile<D>();
  Bf16 *ks = dynamicSmem<Bf16>();                      // [kBlockRows][S]
  Bf16 *vs = ks + kBlockRows * S;                      // [kBlockRows][S]
  Bf16 *qs = vs + kBlockRows * S;                      // [Bq][S]
  Bf16 *dos = qs + Bq * S;                             // [Bq][S]
  float *ls = reinterpret_cast<float *>(dos + Bq * S); // [Bq]
  float *deltas = ls + Bq;                             // [Bq]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int64_t block = blockIdx.x, bkv = block % (p.batch * p.kvHeads);
  const int64_t kt = block / (p.batch * p.kvHeads);
  const int64_t b = bkv / p.kvHeads, kvh = bkv % p.kvHeads;
  const int64_t k0 = kt * kBlockRows, rowBase = b * p.seq;
  const int64_t warpKey0 = k0 + warp * kWarpRows;
  const int64_t keys[2] = {warpKey0 + g, warpKey0 + g + 8};

  // Visible after the first __syncthreads of the loop.
  loadTile<D>(ks, kBlockRows, k, p.kvStride, rowBase, k0, p.seq, kvh * D);
  loadTile<D>(vs, kBlockRows, v, p.kvStride, rowBase, k0, p.seq, kvh * D);

  float dK[D / 8][4], dV[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      dK[n][e] = dV[n][e] = 0.0f;

  for (int64_t hq = 0; hq < p.group; ++hq) {
    const int64_t h = kvh * p.group + hq;
    // Query rows before k0 see none of these keys.
    for (int64_t i0 = k0 / Bq * Bq; i0 < p.seq; i0 += Bq) {
      __syncthreads(); // the previous tile is no longer read
      loadTile<D>(qs, Bq, q, p.qStride, rowBase, i0, p.seq, h * D);
      loadTile<D>(dos, Bq, dout, p.qStride, rowBase, i0, p.seq, h * D);
      for (int r = threadIdx.x; r < Bq; r += kThreads) {
        const int64_t i = i0 + r, row = (b * p.heads + h) * p.seq + i;
        ls[r] = i < p.seq ? lse[row] : 0.0f;
        deltas[r] = i < p.seq ? delta[row] : 0.0f;
      }
      __syncthreads();

      float st[Bq / 8][4], dpt[Bq / 8][4];
      multiplyABt<D, Bq>(st, ks, warp * kWarpRows, qs, lane);
      multiplyABt<D, Bq>(dpt, vs, warp * kWarpRows, dos, lane);
#pragma unroll
      for (int n = 0; n < Bq / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int c = 8 * n + 2 * t + e % 2;
          const int64_t i = i0 + c, j = keys[e / 2];
          const float pij = i < p.seq && j <= i
                                ? exp2f(st[n][e] * p.scaleLog2 - ls[c])
                                : 0.0f;
          st[n][e] = pij;                            // P^T
          dpt[n][e] = pij * (dpt[n][e] - deltas[c]); // dS^T
        }
      multiplyWX<D, Bq>(dV, st, dos, lane);
      multiplyWX<D, Bq>(dK, dpt, qs, lane);
    }
  }

  const float one[2] = {1.0f, 1.0f}, scale[2] = {p.scale, p.scale};
  storeRows<D>(dk, dK, scale, p.kvStride, rowBase, warpKey0, p.seq, kvh * D,
               lane);
  storeRows<D>(dv, dV, one, p.kvStride, rowBase, warpKey0, p.seq, kvh * D,
               lane);
}

} // namespace zrt::cuda::tc

#endif // ZRT_CUDA_ATTENTION_TC_KERNELS_CUH
