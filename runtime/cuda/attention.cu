//===- attention.cu - Fused causal attention, forward and backward --------===//
//
// FlashAttention-2 style: no T x T matrix ever exists, in global or in
// shared memory. Two kernel families, chosen per call (attention_path.h):
//  - bf16 tensors with head_dim 64 or 128 (GPT-2, Llama) run on the tensor
//    cores (attention_tc.cu, attention_tc_kernels.cuh): bf16 products with
//    float32 accumulation, the softmax statistics in float32, P (and in the
//    backward dS) rounded to bf16 before the products that consume them, as
//    FlashAttention does. bf16 storage already rounds q, k, v and the
//    outputs to 8 significant bits; the extra roundings of P and dS (2^-9
//    relative) stay within the bf16 tolerance the checks hold the backend to
//    (tests/cuda_kernel_tests.cpp, tests/emulation).
//  - everything else, every float32 call included, runs on the SIMT kernels
//    of this file: float32 arithmetic on CUDA cores, bf16 widened when a
//    tile is loaded into shared memory and rounded once when a result is
//    stored. float32 calls stay off the tensor cores because the CPU
//    backend's contract is float32 math, which bf16 or TF32 scores would
//    break. ZRT_CUDA_ATTENTION=simt sends bf16 calls here too.
//
// The rest of this comment describes the SIMT kernels; the tensor-core ones
// follow the same plan (the same three backward kernels, the same grid
// orders) with warps of 16 rows and mma fragments.
//
// Head dimensions: a kernel is compiled for a padded width Dp of 32, 64 or
// 128 and every head_dim in 1..128 runs on the smallest Dp >= head_dim, the
// columns beyond head_dim zero-filled in shared memory (they add nothing to
// a dot product, and are never stored). head_dim > 128 is fatal.
//
// Forward (attentionForwardKernel): one block of 8 warps per (batch, head,
// tile of Br query rows). The Q tile stays in shared memory; the block walks
// the key/value tiles of 64 keys up to the diagonal. Each warp owns R query
// rows (Br = 8 R), each lane two keys of the tile (lane, lane + 32) for the
// scores and Dp/32 output columns (lane + 32 c) for the accumulator, so a
// row's max and sum are warp shuffles and the online softmax (running max m,
// running sum l, accumulator rescaled by exp(m_old - m_new)) lives in
// registers. Padded shared-memory rows (Dp + 1 floats) keep the lane-strided
// reads conflict-free; the broadcast reads are float4.
//
// Backward: the ABI hands the backward q, k, v and dout only (no output, no
// logsumexp), so it runs three kernels:
//  1. the forward kernel again, in "stats" mode: instead of storing O it
//     stores, per query row, L = m + log(l) and D = dO . O (= sum_j P_ij
//     dO_i . v_j, the rowsum(P * dP) of the softmax gradient), both float32,
//     into the context's kernel scratch (8 bytes a query row; a buffer
//     reused across calls and grown to the largest call, so that the memory
//     report's runtime workspace counts it: CudaRuntime::kernelScratch);
//  2. attentionDkDvKernel: one block per (batch, kv head, tile of keys),
//     looping over every query head of the GQA group and every query chunk
//     at or after the tile's first key, recomputing P = exp(s - L) and
//     dS = P (dO . v - D), accumulating dV += P^T dO and dK += dS^T Q in
//     registers. Each dk/dv element is owned by one thread of one block and
//     summed in a fixed order: deterministic, no atomics;
//  3. attentionDqKernel: one block per (batch, head, query tile), looping
//     over the key tiles up to the diagonal: dQ = scale dS K, also owned.
// The scores are recomputed twice more than FlashAttention-2's single
// backward pass, the price of deterministic dk/dv without atomics and of the
// missing saved statistics; all three kernels are O(T^2 d) work and O(T d)
// memory.
//
// Work balance under the causal mask: tiles far from the start of the
// sequence carry the most work, so the forward and dq grids issue the last
// query tiles first and the dk/dv grid the first key tiles first.
//
//===----------------------------------------------------------------------===//

#include "cuda/attention_path.h"
#include "cuda/attention_tc.h"
#include "cuda/cuda_check.h"
#include "cuda/device_context.h"
#include "cuda/kernels.h"

#include <cuda_bf16.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <type_traits>

using namespace zrt;
using namespace zrt::cuda;

namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
/// Keys per tile in the forward and dq kernels: two per lane.
constexpr int kKeyTile = 64;
/// Query rows per chunk in the dk/dv kernel: one per lane.
constexpr int kQueryChunk = 32;

/// Query rows per warp (forward, dq) and keys per warp (dk/dv): fewer at
/// Dp = 128 so that the tiles fit twice in an SM's shared memory and the
/// per-thread accumulators stay at 16 floats.
template <int Dp> __host__ __device__ constexpr int rowsPerWarp() {
  return Dp >= 128 ? 4 : 8;
}
template <int Dp> __host__ __device__ constexpr int keysPerWarp() {
  return Dp >= 128 ? 4 : 8;
}

/// Shared-memory floats of each kernel (layouts in the kernels).
template <int Dp> __host__ __device__ constexpr int forwardSmemFloats() {
  constexpr int br = kWarps * rowsPerWarp<Dp>();
  return br * Dp + kKeyTile * (Dp + 1) + kKeyTile * Dp + br * kKeyTile;
}
template <int Dp> __host__ __device__ constexpr int dqSmemFloats() {
  constexpr int br = kWarps * rowsPerWarp<Dp>();
  return 2 * br * Dp + 2 * kKeyTile * (Dp + 1) + br * kKeyTile;
}
template <int Dp> __host__ __device__ constexpr int dkdvSmemFloats() {
  constexpr int bk = kWarps * keysPerWarp<Dp>();
  return 2 * bk * Dp + 2 * kQueryChunk * (Dp + 1) + 2 * bk * kQueryChunk +
         2 * kQueryChunk;
}

/// Shapes and strides, passed by value to every kernel.
struct Shape {
  int64_t batch, seq, heads, kvHeads, headDim;
  int64_t group;    // heads / kvHeads: query heads per kv head
  int64_t qStride;  // elements between rows of q, out, dout, dq
  int64_t kvStride; // elements between rows of k, v, dk, dv
  float scale;      // 1 / sqrt(headDim)
};

__device__ __forceinline__ float loadF(const float *p) { return *p; }
__device__ __forceinline__ float loadF(const __nv_bfloat16 *p) {
  return __bfloat162float(*p);
}
__device__ __forceinline__ void storeF(float *p, float x) { *p = x; }
__device__ __forceinline__ void storeF(__nv_bfloat16 *p, float x) {
  *p = __float2bfloat16_rn(x);
}

/// xor-butterflies: every lane ends with the bitwise-same result (each step
/// combines the same two partial values, in either order).
__device__ __forceinline__ float warpSum(float x) {
  for (int offset = 16; offset > 0; offset >>= 1)
    x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}
__device__ __forceinline__ float warpMax(float x) {
  for (int offset = 16; offset > 0; offset >>= 1)
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}

/// dst[r * ld + c] = element (row t0 + r, column colOffset + c) of a
/// row-major tensor with `stride` elements a row, rows counted from rowBase
/// (b * seq), widened to float; 0 where t0 + r >= seq or c >= headDim. The
/// whole block cooperates; consecutive threads read consecutive columns.
template <int Dp, typename T>
__device__ void loadTile(float *dst, int ld, int rows, const T *src,
                         int64_t stride, int64_t rowBase, int64_t t0,
                         int64_t seq, int headDim, int64_t colOffset) {
  for (int idx = threadIdx.x; idx < rows * Dp; idx += blockDim.x) {
    int r = idx / Dp, c = idx % Dp;
    int64_t t = t0 + r;
    float x = 0.0f;
    if (t < seq && c < headDim)
      x = loadF(src + (rowBase + t) * stride + colOffset + c);
    dst[r * ld + c] = x;
  }
}

/// out[r][c] = a[r] . b[lane + 32 c] for the warp's R rows of `a` (row-major,
/// Dp floats a row, read as float4 broadcasts) against the lane's two rows
/// of `b` (Dp + 1 floats a row, so lanes hit distinct banks).
template <int Dp, int R>
__device__ __forceinline__ void
rowsDotLaneKeys(float (&out)[R][2], const float *a, const float *b, int lane) {
#pragma unroll
  for (int r = 0; r < R; ++r)
    out[r][0] = out[r][1] = 0.0f;
  const float *b0 = b + lane * (Dp + 1);
  const float *b1 = b + (lane + 32) * (Dp + 1);
#pragma unroll 2
  for (int d = 0; d < Dp; d += 4) {
    float x0[4], x1[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      x0[u] = b0[d + u];
      x1[u] = b1[d + u];
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float4 av = *reinterpret_cast<const float4 *>(a + r * Dp + d);
      out[r][0] += av.x * x0[0] + av.y * x0[1] + av.z * x0[2] + av.w * x0[3];
      out[r][1] += av.x * x1[0] + av.y * x1[1] + av.z * x1[2] + av.w * x1[3];
    }
  }
}

/// out[r] = a[lane] . b[r] for the lane's row of `a` (Dp + 1 floats a row)
/// against the warp's K rows of `b` (Dp floats a row, float4 broadcasts).
template <int Dp, int K>
__device__ __forceinline__ void laneRowDotKeys(float (&out)[K], const float *a,
                                               const float *b, int lane) {
#pragma unroll
  for (int r = 0; r < K; ++r)
    out[r] = 0.0f;
  const float *a0 = a + lane * (Dp + 1);
#pragma unroll 2
  for (int d = 0; d < Dp; d += 4) {
    float x[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      x[u] = a0[d + u];
#pragma unroll
    for (int r = 0; r < K; ++r) {
      float4 bv = *reinterpret_cast<const float4 *>(b + r * Dp + d);
      out[r] += bv.x * x[0] + bv.y * x[1] + bv.z * x[2] + bv.w * x[3];
    }
  }
}

/// acc[r][c] += sum_{j < N} w[r * N + j] * x[j * ldx + lane + 32 c]: the
/// warp's R weight rows (float4 broadcasts) times N rows of x (consecutive
/// lanes read consecutive columns).
template <int Dp, int R, int N>
__device__ __forceinline__ void accumulateRows(float (&acc)[R][Dp / 32],
                                               const float *w, const float *x,
                                               int ldx, int lane) {
  constexpr int C = Dp / 32;
#pragma unroll 2
  for (int j = 0; j < N; j += 4) {
    float xv[4][C];
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int c = 0; c < C; ++c)
        xv[u][c] = x[(j + u) * ldx + lane + 32 * c];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float4 wv = *reinterpret_cast<const float4 *>(w + r * N + j);
#pragma unroll
      for (int c = 0; c < C; ++c)
        acc[r][c] += wv.x * xv[0][c] + wv.y * xv[1][c] + wv.z * xv[2][c] +
                     wv.w * xv[3][c];
    }
  }
}

/// Forward (Stats == false: out = softmax(q k^T scale, causal) v) or the
/// backward's statistics (Stats == true: lse = m + log l and delta = dO . O
/// per query row, indexed (b * heads + h) * seq + t; out unused).
template <int Dp, typename T, bool Stats>
__global__ void __launch_bounds__(kThreads)
    attentionForwardKernel(Shape s, const T *__restrict__ q,
                           const T *__restrict__ k, const T *__restrict__ v,
                           T *__restrict__ out, const T *__restrict__ dout,
                           float *__restrict__ lse, float *__restrict__ delta) {
  constexpr int R = rowsPerWarp<Dp>();
  constexpr int Br = kWarps * R;
  constexpr int Bc = kKeyTile;
  constexpr int C = Dp / 32;
  extern __shared__ float4 smem4[];
  float *qs = reinterpret_cast<float *>(smem4); // [Br][Dp]
  float *ks = qs + Br * Dp;                     // [Bc][Dp + 1]
  float *vs = ks + Bc * (Dp + 1);               // [Bc][Dp]
  float *ps = vs + Bc * Dp;                     // [Br][Bc]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t block = blockIdx.x, bh = block % (s.batch * s.heads);
  const int64_t numQueryTiles = (s.seq + Br - 1) / Br;
  const int64_t qt = numQueryTiles - 1 - block / (s.batch * s.heads);
  const int64_t b = bh / s.heads, h = bh % s.heads, kvh = h / s.group;
  const int64_t q0 = qt * Br, rowBase = b * s.seq;
  const int hd = (int)s.headDim;

  loadTile<Dp>(qs, Dp, Br, q, s.qStride, rowBase, q0, s.seq, hd, h * hd);

  float m[R], l[R], acc[R][C];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
#pragma unroll
    for (int c = 0; c < C; ++c)
      acc[r][c] = 0.0f;
  }

  const int64_t keyEnd = min(s.seq, q0 + Br); // keys [0, keyEnd) are visible
  const int64_t numKeyTiles = (keyEnd + Bc - 1) / Bc;
  for (int64_t kt = 0; kt < numKeyTiles; ++kt) {
    const int64_t k0 = kt * Bc;
    __syncthreads(); // the previous tile's K, V and P are no longer read
    loadTile<Dp>(ks, Dp + 1, Bc, k, s.kvStride, rowBase, k0, s.seq, hd,
                 kvh * hd);
    loadTile<Dp>(vs, Dp, Bc, v, s.kvStride, rowBase, k0, s.seq, hd, kvh * hd);
    __syncthreads();

    float sc[R][2];
    rowsDotLaneKeys<Dp, R>(sc, qs + warp * R * Dp, ks, lane);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t i = q0 + warp * R + r;
      float s0 = k0 + lane <= i ? sc[r][0] * s.scale : -INFINITY;
      float s1 = k0 + lane + 32 <= i ? sc[r][1] * s.scale : -INFINITY;
      float mNew = fmaxf(m[r], warpMax(fmaxf(s0, s1)));
      // A row with nothing visible yet keeps m = -inf; exponentiate against
      // 0 then, so that every term is exp(-inf) = 0 rather than NaN.
      float base = mNew == -INFINITY ? 0.0f : mNew;
      float p0 = expf(s0 - base), p1 = expf(s1 - base);
      float correction = expf(m[r] - base);
      l[r] = l[r] * correction + warpSum(p0 + p1);
      m[r] = mNew;
#pragma unroll
      for (int c = 0; c < C; ++c)
        acc[r][c] *= correction;
      ps[(warp * R + r) * Bc + lane] = p0;
      ps[(warp * R + r) * Bc + lane + 32] = p1;
    }
    __syncwarp(); // the warp's P rows are written by all its lanes
    accumulateRows<Dp, R, Bc>(acc, ps + warp * R * Bc, vs, Dp, lane);
  }

#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t i = q0 + warp * R + r;
    if (i >= s.seq) // uniform across the warp
      continue;
    // Every real row sees key 0, so l >= 1.
    const float inv = 1.0f / l[r];
    const int64_t offset = (rowBase + i) * s.qStride + h * hd;
    if constexpr (!Stats) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        int col = lane + 32 * c;
        if (col < hd)
          storeF(out + offset + col, acc[r][c] * inv);
      }
    } else {
      float dot = 0.0f;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        int col = lane + 32 * c;
        if (col < hd)
          dot += loadF(dout + offset + col) * (acc[r][c] * inv);
      }
      dot = warpSum(dot);
      if (lane == 0) {
        const int64_t row = (b * s.heads + h) * s.seq + i;
        lse[row] = m[r] + logf(l[r]);
        delta[row] = dot;
      }
    }
  }
}

/// dq = scale * sum_j dS_ij k_j with dS = P (dO . v - D), P = exp(s - L).
template <int Dp, typename T>
__global__ void __launch_bounds__(kThreads)
    attentionDqKernel(Shape s, const T *__restrict__ q, const T *__restrict__ k,
                      const T *__restrict__ v, const T *__restrict__ dout,
                      const float *__restrict__ lse,
                      const float *__restrict__ delta, T *__restrict__ dq) {
  constexpr int R = rowsPerWarp<Dp>();
  constexpr int Br = kWarps * R;
  constexpr int Bc = kKeyTile;
  constexpr int C = Dp / 32;
  extern __shared__ float4 smem4[];
  float *qs = reinterpret_cast<float *>(smem4); // [Br][Dp]
  float *dos = qs + Br * Dp;                    // [Br][Dp]
  float *ks = dos + Br * Dp;                    // [Bc][Dp + 1]
  float *vs = ks + Bc * (Dp + 1);               // [Bc][Dp + 1]
  float *dss = vs + Bc * (Dp + 1);              // [Br][Bc]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t block = blockIdx.x, bh = block % (s.batch * s.heads);
  const int64_t numQueryTiles = (s.seq + Br - 1) / Br;
  const int64_t qt = numQueryTiles - 1 - block / (s.batch * s.heads);
  const int64_t b = bh / s.heads, h = bh % s.heads, kvh = h / s.group;
  const int64_t q0 = qt * Br, rowBase = b * s.seq;
  const int hd = (int)s.headDim;

  loadTile<Dp>(qs, Dp, Br, q, s.qStride, rowBase, q0, s.seq, hd, h * hd);
  loadTile<Dp>(dos, Dp, Br, dout, s.qStride, rowBase, q0, s.seq, hd, h * hd);

  float L[R], D[R], acc[R][C];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t i = q0 + warp * R + r;
    const int64_t row = (b * s.heads + h) * s.seq + i;
    L[r] = i < s.seq ? lse[row] : 0.0f;
    D[r] = i < s.seq ? delta[row] : 0.0f;
#pragma unroll
    for (int c = 0; c < C; ++c)
      acc[r][c] = 0.0f;
  }

  const int64_t keyEnd = min(s.seq, q0 + Br);
  const int64_t numKeyTiles = (keyEnd + Bc - 1) / Bc;
  for (int64_t kt = 0; kt < numKeyTiles; ++kt) {
    const int64_t k0 = kt * Bc;
    __syncthreads();
    loadTile<Dp>(ks, Dp + 1, Bc, k, s.kvStride, rowBase, k0, s.seq, hd,
                 kvh * hd);
    loadTile<Dp>(vs, Dp + 1, Bc, v, s.kvStride, rowBase, k0, s.seq, hd,
                 kvh * hd);
    __syncthreads();

    float sc[R][2], dp[R][2];
    rowsDotLaneKeys<Dp, R>(sc, qs + warp * R * Dp, ks, lane);
    rowsDotLaneKeys<Dp, R>(dp, dos + warp * R * Dp, vs, lane);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t i = q0 + warp * R + r;
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int64_t j = k0 + lane + 32 * c;
        float p = i < s.seq && j <= i ? expf(sc[r][c] * s.scale - L[r]) : 0.0f;
        dss[(warp * R + r) * Bc + lane + 32 * c] = p * (dp[r][c] - D[r]);
      }
    }
    __syncwarp();
    accumulateRows<Dp, R, Bc>(acc, dss + warp * R * Bc, ks, Dp + 1, lane);
  }

#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t i = q0 + warp * R + r;
    if (i >= s.seq)
      continue;
    const int64_t offset = (rowBase + i) * s.qStride + h * hd;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      int col = lane + 32 * c;
      if (col < hd)
        storeF(dq + offset + col, acc[r][c] * s.scale);
    }
  }
}

/// dv = sum_i P_ij dO_i and dk = scale * sum_i dS_ij q_i over every query
/// row i >= j of every query head reading this kv head.
template <int Dp, typename T>
__global__ void __launch_bounds__(kThreads)
    attentionDkDvKernel(Shape s, const T *__restrict__ q,
                        const T *__restrict__ k, const T *__restrict__ v,
                        const T *__restrict__ dout,
                        const float *__restrict__ lse,
                        const float *__restrict__ delta, T *__restrict__ dk,
                        T *__restrict__ dv) {
  constexpr int K = keysPerWarp<Dp>();
  constexpr int Bk = kWarps * K;
  constexpr int Bq = kQueryChunk;
  constexpr int C = Dp / 32;
  extern __shared__ float4 smem4[];
  float *ks = reinterpret_cast<float *>(smem4); // [Bk][Dp]
  float *vs = ks + Bk * Dp;                     // [Bk][Dp]
  float *qs = vs + Bk * Dp;                     // [Bq][Dp + 1]
  float *dos = qs + Bq * (Dp + 1);              // [Bq][Dp + 1]
  float *ps = dos + Bq * (Dp + 1);              // [Bk][Bq]
  float *dss = ps + Bk * Bq;                    // [Bk][Bq]
  float *ls = dss + Bk * Bq;                    // [Bq]
  float *ds = ls + Bq;                          // [Bq]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t block = blockIdx.x, bkv = block % (s.batch * s.kvHeads);
  const int64_t kt = block / (s.batch * s.kvHeads);
  const int64_t b = bkv / s.kvHeads, kvh = bkv % s.kvHeads;
  const int64_t k0 = kt * Bk, rowBase = b * s.seq;
  const int hd = (int)s.headDim;

  // Visible after the first __syncthreads of the loop below.
  loadTile<Dp>(ks, Dp, Bk, k, s.kvStride, rowBase, k0, s.seq, hd, kvh * hd);
  loadTile<Dp>(vs, Dp, Bk, v, s.kvStride, rowBase, k0, s.seq, hd, kvh * hd);

  float dK[K][C], dV[K][C];
#pragma unroll
  for (int r = 0; r < K; ++r)
#pragma unroll
    for (int c = 0; c < C; ++c)
      dK[r][c] = dV[r][c] = 0.0f;

  // Query rows before k0 see none of these keys.
  const int64_t firstChunk = k0 / Bq;
  const int64_t numChunks = (s.seq + Bq - 1) / Bq;
  for (int64_t hq = 0; hq < s.group; ++hq) {
    const int64_t h = kvh * s.group + hq;
    for (int64_t qc = firstChunk; qc < numChunks; ++qc) {
      const int64_t i0 = qc * Bq;
      __syncthreads(); // the previous chunk is no longer read
      loadTile<Dp>(qs, Dp + 1, Bq, q, s.qStride, rowBase, i0, s.seq, hd,
                   h * hd);
      loadTile<Dp>(dos, Dp + 1, Bq, dout, s.qStride, rowBase, i0, s.seq, hd,
                   h * hd);
      for (int t = threadIdx.x; t < Bq; t += blockDim.x) {
        const int64_t i = i0 + t, row = (b * s.heads + h) * s.seq + i;
        ls[t] = i < s.seq ? lse[row] : 0.0f;
        ds[t] = i < s.seq ? delta[row] : 0.0f;
      }
      __syncthreads();

      float sc[K], dp[K];
      laneRowDotKeys<Dp, K>(sc, qs, ks + warp * K * Dp, lane);
      laneRowDotKeys<Dp, K>(dp, dos, vs + warp * K * Dp, lane);
      const int64_t i = i0 + lane;
      const float Li = ls[lane], Di = ds[lane];
#pragma unroll
      for (int r = 0; r < K; ++r) {
        const int64_t j = k0 + warp * K + r;
        float p = i < s.seq && j <= i ? expf(sc[r] * s.scale - Li) : 0.0f;
        ps[(warp * K + r) * Bq + lane] = p;
        dss[(warp * K + r) * Bq + lane] = p * (dp[r] - Di);
      }
      __syncwarp();
      accumulateRows<Dp, K, Bq>(dV, ps + warp * K * Bq, dos, Dp + 1, lane);
      accumulateRows<Dp, K, Bq>(dK, dss + warp * K * Bq, qs, Dp + 1, lane);
    }
  }

#pragma unroll
  for (int r = 0; r < K; ++r) {
    const int64_t j = k0 + warp * K + r;
    if (j >= s.seq)
      continue;
    const int64_t offset = (rowBase + j) * s.kvStride + kvh * hd;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      int col = lane + 32 * c;
      if (col < hd) {
        storeF(dk + offset + col, dK[r][c] * s.scale);
        storeF(dv + offset + col, dV[r][c]);
      }
    }
  }
}

//===--- Host side --------------------------------------------------------===//

Shape makeShape(const char *kernel, int32_t dtype, int64_t batch, int64_t seq,
                int64_t heads, int64_t kvHeads, int64_t headDim) {
  if (dtype != ZRT_F32 && dtype != ZRT_BF16)
    fatal("%s: unsupported dtype %d", kernel, (int)dtype);
  if (batch < 0 || seq < 0 || heads <= 0 || kvHeads <= 0 || headDim <= 0 ||
      heads % kvHeads != 0)
    fatal("%s: invalid shape batch=%lld seq=%lld heads=%lld kv_heads=%lld "
          "head_dim=%lld (heads must be a multiple of kv_heads)",
          kernel, (long long)batch, (long long)seq, (long long)heads,
          (long long)kvHeads, (long long)headDim);
  if (headDim > 128)
    fatal("%s: head_dim=%lld is not supported by the CUDA backend (at most "
          "128)",
          kernel, (long long)headDim);
  return Shape{batch,
               seq,
               heads,
               kvHeads,
               headDim,
               heads / kvHeads,
               heads * headDim,
               kvHeads * headDim,
               1.0f / std::sqrt((float)headDim)};
}

/// The 1-D grid of `tiles` blocks per (batch, head); fatal beyond CUDA's
/// limit of 2^31 - 1 blocks.
unsigned gridSize(const char *kernel, int64_t tiles, int64_t batch,
                  int64_t heads) {
  if (tiles > INT_MAX / batch / heads)
    fatal("%s: %lld tiles x batch=%lld x heads=%lld exceed CUDA's grid limit",
          kernel, (long long)tiles, (long long)batch, (long long)heads);
  return (unsigned)(tiles * batch * heads);
}

template <typename Kernel> void allowSmem(Kernel kernel, size_t bytes) {
  // Above 48 KiB a kernel must opt in to dynamic shared memory.
  ZRT_CUDA_CHECK(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
}

template <int Dp, typename T, bool Stats>
void launchForward(const char *kernel, cudaStream_t stream, const Shape &s,
                   const void *q, const void *k, const void *v, void *out,
                   const void *dout, float *lse, float *delta) {
  constexpr int Br = kWarps * rowsPerWarp<Dp>();
  unsigned grid = gridSize(kernel, (s.seq + Br - 1) / Br, s.batch, s.heads);
  size_t smem = forwardSmemFloats<Dp>() * sizeof(float);
  auto fn = attentionForwardKernel<Dp, T, Stats>;
  allowSmem(fn, smem);
  fn<<<grid, kThreads, smem, stream>>>(
      s, static_cast<const T *>(q), static_cast<const T *>(k),
      static_cast<const T *>(v), static_cast<T *>(out),
      static_cast<const T *>(dout), lse, delta);
  ZRT_CUDA_CHECK_LAUNCH(kernel);
}

template <int Dp, typename T>
void launchBackward(const char *kernel, cudaStream_t stream, const Shape &s,
                    const void *q, const void *k, const void *v,
                    const void *dout, void *dq, void *dk, void *dv, float *lse,
                    float *delta) {
  launchForward<Dp, T, true>(kernel, stream, s, q, k, v, nullptr, dout, lse,
                             delta);

  constexpr int Bk = kWarps * keysPerWarp<Dp>();
  unsigned dkdvGrid =
      gridSize(kernel, (s.seq + Bk - 1) / Bk, s.batch, s.kvHeads);
  size_t dkdvSmem = dkdvSmemFloats<Dp>() * sizeof(float);
  auto dkdvFn = attentionDkDvKernel<Dp, T>;
  allowSmem(dkdvFn, dkdvSmem);
  dkdvFn<<<dkdvGrid, kThreads, dkdvSmem, stream>>>(
      s, static_cast<const T *>(q), static_cast<const T *>(k),
      static_cast<const T *>(v), static_cast<const T *>(dout), lse, delta,
      static_cast<T *>(dk), static_cast<T *>(dv));
  ZRT_CUDA_CHECK_LAUNCH(kernel);

  constexpr int Br = kWarps * rowsPerWarp<Dp>();
  unsigned dqGrid = gridSize(kernel, (s.seq + Br - 1) / Br, s.batch, s.heads);
  size_t dqSmem = dqSmemFloats<Dp>() * sizeof(float);
  auto dqFn = attentionDqKernel<Dp, T>;
  allowSmem(dqFn, dqSmem);
  dqFn<<<dqGrid, kThreads, dqSmem, stream>>>(
      s, static_cast<const T *>(q), static_cast<const T *>(k),
      static_cast<const T *>(v), static_cast<const T *>(dout), lse, delta,
      static_cast<T *>(dq));
  ZRT_CUDA_CHECK_LAUNCH(kernel);
}

/// ZRT_CUDA_ATTENTION, read on first use: unset, empty or tc (tensor cores
/// where they fit) or simt.
AttentionPath readAttentionPath() {
  const char *env = std::getenv("ZRT_CUDA_ATTENTION");
  if (!env || !*env || std::strcmp(env, "tc") == 0)
    return AttentionPath::TensorCores;
  if (std::strcmp(env, "simt") == 0)
    return AttentionPath::Simt;
  fatal("ZRT_CUDA_ATTENTION=%s: expected tc or simt", env);
}

AttentionPath &attentionPathSetting() {
  static AttentionPath path = readAttentionPath();
  return path;
}

/// Whether this call runs on the tensor-core kernels.
bool useTensorCores(int32_t dtype, int64_t headDim,
                    std::initializer_list<const void *> tensors) {
  return attentionPathSetting() == AttentionPath::TensorCores &&
         tensorCoreAttentionFits(dtype, headDim, tensors.begin(),
                                 (int)tensors.size());
}

/// Calls f(std::integral_constant<int, Dp>(), T()) for the padded width Dp
/// of headDim and the storage type T of dtype.
template <typename F> void dispatch(int32_t dtype, int64_t headDim, F &&f) {
  auto byWidth = [&](auto tag) {
    if (headDim <= 32)
      f(std::integral_constant<int, 32>(), tag);
    else if (headDim <= 64)
      f(std::integral_constant<int, 64>(), tag);
    else
      f(std::integral_constant<int, 128>(), tag);
  };
  if (dtype == ZRT_BF16)
    byWidth(__nv_bfloat16());
  else
    byWidth(float());
}

} // namespace

void zrt::cuda::attention(zrt_context *ctx, int32_t dtype, const void *q,
                          const void *k, const void *v, void *out,
                          int64_t batch, int64_t seq, int64_t heads,
                          int64_t kvHeads, int64_t headDim) {
  const char *kernel = "zrt_attention";
  Shape s = makeShape(kernel, dtype, batch, seq, heads, kvHeads, headDim);
  if (batch == 0 || seq == 0)
    return;
  cudaStream_t stream = computeStream(ctx);
  if (useTensorCores(dtype, headDim, {q, k, v, out})) {
    attentionTensorCores(kernel, stream, q, k, v, out, batch, seq, heads,
                         kvHeads, headDim);
    return;
  }
  dispatch(dtype, headDim, [&](auto width, auto tag) {
    launchForward<decltype(width)::value, decltype(tag), false>(
        kernel, stream, s, q, k, v, out, nullptr, nullptr, nullptr);
  });
}

void zrt::cuda::attentionGrad(zrt_context *ctx, int32_t dtype, const void *q,
                              const void *k, const void *v, const void *dout,
                              void *dq, void *dk, void *dv, int64_t batch,
                              int64_t seq, int64_t heads, int64_t kvHeads,
                              int64_t headDim) {
  const char *kernel = "zrt_attention_grad";
  Shape s = makeShape(kernel, dtype, batch, seq, heads, kvHeads, headDim);
  if (batch == 0 || seq == 0)
    return;
  cudaStream_t stream = computeStream(ctx);
  // Per query row: the logsumexp L and D = dO . O, float32, in the
  // context's scratch (read only by the kernels enqueued here).
  const size_t rows = (size_t)batch * (size_t)heads * (size_t)seq;
  float *stats = static_cast<float *>(
      runtimeOf(ctx).kernelScratch(2 * rows * sizeof(float)));
  if (useTensorCores(dtype, headDim, {q, k, v, dout, dq, dk, dv})) {
    attentionGradTensorCores(kernel, stream, q, k, v, dout, dq, dk, dv, batch,
                             seq, heads, kvHeads, headDim, stats);
    return;
  }
  float *lse = stats, *delta = stats + rows;
  dispatch(dtype, headDim, [&](auto width, auto tag) {
    launchBackward<decltype(width)::value, decltype(tag)>(
        kernel, stream, s, q, k, v, dout, dq, dk, dv, lse, delta);
  });
}

AttentionPath zrt::cuda::attentionPath() { return attentionPathSetting(); }

void zrt::cuda::setAttentionPath(AttentionPath path) {
  attentionPathSetting() = path;
}
