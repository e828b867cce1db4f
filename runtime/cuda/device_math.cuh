//===- device_math.cuh - Shared device code of the kernels -----*- CUDA -*-===//
//
// What every kernel family's device code needs and nothing more: float32
// views of float and __nv_bfloat16 elements, 16-byte packs for vectorised
// loads, deterministic warp and block sums, launch sizes, the block's
// dynamic shared memory, and the column reduction behind sum_rows and the
// norms' parameter gradients. The host side the launches share (dtype
// dispatch, scratch, the column reduction's launches) is launch_utils.cuh.
//
// This header and the *_kernels.cuh headers that include it compile under
// nvcc and, with ZRT_CUDA_EMULATION defined, as ordinary C++ over the host
// emulator of runtime/cuda/tests/emulation (cuda_emulation.h supplies
// threadIdx, __shfl_xor_sync, ...), which is how the kernels are tested on a
// machine without a GPU (zrt-cuda-kernels-emulated). So they include no
// CUDA header other than through the #ifdef below, and no host-only header.
//
// bf16 is rounded by hand (core/bf16.h, shared with the CPU backend) rather
// than with __float2bfloat16_rn: the two agree on every number, but the CPU
// backend turns a NaN into (bits >> 16) | 0x40 and the hardware into a
// canonical NaN; one rounding for both keeps the two backends bit-identical
// even there, for the cost of a few integer instructions in memory-bound
// kernels.
//
// Every reduction here has a fixed shape (fixed shuffles, fixed shared-memory
// order, a grid that depends only on the sizes), so results are the same run
// to run. None uses floating-point atomics.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_DEVICE_MATH_CUH
#define ZRT_CUDA_DEVICE_MATH_CUH

#ifdef ZRT_CUDA_EMULATION
#include "cuda_emulation.h"
#else
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#endif

#include "core/bf16.h"

#include <algorithm>
#include <cstdint>

namespace zrt::cuda {

using Bf16 = __nv_bfloat16;

//===--- Element conversions ----------------------------------------------===//

__device__ __forceinline__ float toFloat(float v) { return v; }
__device__ __forceinline__ float toFloat(Bf16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T fromFloat(float v);
template <> __device__ __forceinline__ float fromFloat<float>(float v) {
  return v;
}
/// Round to nearest even, NaN quieted with its sign kept: the CPU backend's
/// rounding, from core/bf16.h (see the file comment).
template <> __device__ __forceinline__ Bf16 fromFloat<Bf16>(float v) {
  return __ushort_as_bfloat16(bf16::roundFromFloat(v));
}

template <typename T>
__device__ __forceinline__ float load(const T *data, int64_t i) {
  return toFloat(data[i]);
}
template <typename T>
__device__ __forceinline__ void store(T *data, int64_t i, float value) {
  data[i] = fromFloat<T>(value);
}

//===--- 16-byte packs ----------------------------------------------------===//

/// 16 bytes of T (4 floats or 8 bf16): one 128-bit load or store. Only used
/// at element indices that are multiples of kSize on pointers the host has
/// checked with isAligned16.
template <typename T> struct alignas(16) Pack {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

template <typename T>
__device__ __forceinline__ Pack<T> loadPack(const T *data, int64_t i) {
  return *reinterpret_cast<const Pack<T> *>(data + i);
}
template <typename T>
__device__ __forceinline__ void storePack(T *data, int64_t i,
                                          const Pack<T> &pack) {
  *reinterpret_cast<Pack<T> *>(data + i) = pack;
}

inline bool isAligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

//===--- Launch sizes -----------------------------------------------------===//

constexpr int kThreads = 256;
/// Grid-stride kernels never launch more blocks than this: enough to fill an
/// H200 (132 SMs x 2048 threads) several times over, few enough that the
/// per-block setup stays negligible.
constexpr int64_t kMaxGridBlocks = 4096;

/// Blocks of `threads` for `work` grid-stride items (at least 1).
inline unsigned gridFor(int64_t work, int threads = kThreads) {
  int64_t blocks = (work + threads - 1) / threads;
  return (unsigned)std::clamp<int64_t>(blocks, 1, kMaxGridBlocks);
}

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// std::min is host-only without --expt-relaxed-constexpr.
__host__ __device__ __forceinline__ int64_t minI64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

//===--- Deterministic reductions -----------------------------------------===//

template <typename T> __device__ __forceinline__ T warpSum(T v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// The sum over the block of every thread's `v`, returned to every thread.
/// blockDim.x must be a multiple of 32 (at most 1024) and every thread must
/// call it. Contains __syncthreads, and may be called again right after.
template <typename T> __device__ T blockSum(T v) {
  __shared__ T warpSums[32];
  __shared__ T total;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warpSum(v);
  if (lane == 0)
    warpSums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int warps = blockDim.x / 32;
    T w = lane < warps ? warpSums[lane] : T(0);
    w = warpSum(w);
    if (lane == 0)
      total = w;
  }
  __syncthreads();
  T result = total;
  // A second call must not overwrite `total` before every thread read it.
  __syncthreads();
  return result;
}

//===--- Dynamic shared memory --------------------------------------------===//

/// The block's dynamic shared memory (the launch's third parameter) as T.
template <typename T> __device__ __forceinline__ T *dynamicSharedMemory() {
#ifdef ZRT_CUDA_EMULATION
  return reinterpret_cast<T *>(emu::sharedMemory());
#else
  extern __shared__ float4 dynamicSmem4[];
  return reinterpret_cast<T *>(dynamicSmem4);
#endif
}

//===--- Column sums (sum_rows, dgamma, dbeta) ----------------------------===//
//
// out_k[c] = sum_r term_k(r, c) for k < kOut, over a row-major [rows, cols]
// domain. Pass 1: block (x, y) covers 32 columns and chunk y of the rows;
// its 8 row lanes stride through the chunk, then their sums are added in
// lane order into partials[k][chunk][c]. Pass 2: one thread per column adds
// the chunks in order and rounds once. Every thread's sum order is fixed by
// the sizes alone, so the results are deterministic, and reads are
// coalesced along the rows.
//
// Src is a functor: __device__ void operator()(int64_t r, int64_t c,
// float *acc) const, adding term_k(r, c) to acc[k].

constexpr int kColTile = 32;
constexpr int kRowLanes = 8;
constexpr int64_t kRowsPerChunk = 256;
constexpr int64_t kMaxRowChunks = 1024;

template <int kOut, typename Src>
__global__ void __launch_bounds__(kColTile *kRowLanes)
    columnPartialsKernel(Src src, int64_t rows, int64_t cols,
                         int64_t rowsPerChunk, float *partials) {
  __shared__ float tile[kOut][kRowLanes][kColTile];
  const int64_t c = (int64_t)blockIdx.x * kColTile + threadIdx.x;
  const int64_t chunk = blockIdx.y, chunks = gridDim.y;
  const int64_t first = chunk * rowsPerChunk;
  const int64_t last = minI64(rows, first + rowsPerChunk);
  float acc[kOut];
  for (int k = 0; k < kOut; ++k)
    acc[k] = 0.0f;
  if (c < cols)
    for (int64_t r = first + threadIdx.y; r < last; r += kRowLanes)
      src(r, c, acc);
  for (int k = 0; k < kOut; ++k)
    tile[k][threadIdx.y][threadIdx.x] = acc[k];
  __syncthreads();
  if (threadIdx.y == 0 && c < cols)
    for (int k = 0; k < kOut; ++k) {
      float sum = 0.0f;
      for (int lane = 0; lane < kRowLanes; ++lane)
        sum += tile[k][lane][threadIdx.x];
      partials[((int64_t)k * chunks + chunk) * cols + c] = sum;
    }
}

template <typename T, int kOut> struct ColumnOutputs { T *out[kOut]; };

template <typename T, int kOut>
__global__ void columnFinalKernel(const float *partials, int64_t chunks,
                                  int64_t cols, ColumnOutputs<T, kOut> dst) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < cols;
       c += stride)
    for (int k = 0; k < kOut; ++k) {
      float sum = 0.0f;
      for (int64_t chunk = 0; chunk < chunks; ++chunk)
        sum += partials[((int64_t)k * chunks + chunk) * cols + c];
      store(dst.out[k], c, sum);
    }
}

/// The grid of columnPartialsKernel for rows > 0: chunks of rowsPerChunk
/// rows (at most kMaxRowChunks, none empty), a block per 32 columns of a
/// chunk. columnFinalKernel then runs on gridFor(cols) blocks of kThreads.
struct ColumnPlan {
  int64_t chunks, rowsPerChunk;
  dim3 partialsGrid, partialsBlock;
};
inline ColumnPlan planColumns(int64_t rows, int64_t cols) {
  int64_t chunks = std::min(ceilDiv(rows, kRowsPerChunk), kMaxRowChunks);
  const int64_t rowsPerChunk = ceilDiv(rows, chunks);
  chunks = ceilDiv(rows, rowsPerChunk); // no empty chunk
  return {chunks, rowsPerChunk,
          dim3((unsigned)ceilDiv(cols, kColTile), (unsigned)chunks),
          dim3(kColTile, kRowLanes)};
}

} // namespace zrt::cuda

#endif // ZRT_CUDA_DEVICE_MATH_CUH
