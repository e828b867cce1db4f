//===- attention_kernels.cuh - Fused causal attention, SIMT ----*- CUDA -*-===//
//
// The device code of attention.cu's SIMT kernels (whose comment describes
// them), in a header so that the host emulator of
// runtime/cuda/tests/emulation compiles it too (see device_math.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_ATTENTION_KERNELS_CUH
#define ZRT_CUDA_ATTENTION_KERNELS_CUH

#include "cuda/device_math.cuh"
#include "zero/zrt.h"

#include <cmath>
#include <type_traits>

namespace zrt::cuda::simt {

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
  float *qs = dynamicSharedMemory<float>(); // [Br][Dp]
  float *ks = qs + Br * Dp;                 // [Bc][Dp + 1]
  float *vs = ks + Bc * (Dp + 1);           // [Bc][Dp]
  float *ps = vs + Bc * Dp;                 // [Br][Bc]

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
  float *qs = dynamicSharedMemory<float>(); // [Br][Dp]
  float *dos = qs + Br * Dp;                // [Br][Dp]
  float *ks = dos + Br * Dp;                // [Bc][Dp + 1]
  float *vs = ks + Bc * (Dp + 1);           // [Bc][Dp + 1]
  float *dss = vs + Bc * (Dp + 1);          // [Br][Bc]

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
  float *ks = dynamicSharedMemory<float>(); // [Bk][Dp]
  float *vs = ks + Bk * Dp;                 // [Bk][Dp]
  float *qs = vs + Bk * Dp;                 // [Bq][Dp + 1]
  float *dos = qs + Bq * (Dp + 1);          // [Bq][Dp + 1]
  float *ps = dos + Bq * (Dp + 1);          // [Bk][Bq]
  float *dss = ps + Bk * Bq;                // [Bk][Bq]
  float *ls = dss + Bk * Bq;                // [Bq]
  float *ds = ls + Bq;                      // [Bq]

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

//===--- Shapes and widths ------------------------------------------------===//

/// The shape of a call (validated by the caller: attention.cu's
/// makeShape).
inline Shape shapeOf(int64_t batch, int64_t seq, int64_t heads, int64_t kvHeads,
                     int64_t headDim) {
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

/// Calls f(std::integral_constant<int, Dp>(), T()) for the padded width Dp
/// of headDim and the storage type T of dtype.
template <typename F>
inline void dispatch(int32_t dtype, int64_t headDim, F &&f) {
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

} // namespace zrt::cuda::simt

#endif // ZRT_CUDA_ATTENTION_KERNELS_CUH
