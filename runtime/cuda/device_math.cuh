//===- device_math.cuh - Shared helpers of the CUDA kernels ----*- CUDA -*-===//
//
// What every kernel family needs and nothing more: the dtype dispatch (the
// same error message as the CPU backend's), float32 views of float and
// __nv_bfloat16 elements, 16-byte packs for vectorised loads, deterministic
// warp and block sums, launch sizes, stream-ordered scratch, and the
// column reduction behind sum_rows and the norms' parameter gradients.
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

#include "core/bf16.h"
#include "core/check.h"
#include "cuda/cuda_check.h"
#include "cuda/kernels.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace zrt::cuda {

using Bf16 = __nv_bfloat16;

//===--- Dtypes -----------------------------------------------------------===//

/// Stops the job: `kernel` was called with a dtype zrt.h does not define.
[[noreturn]] inline void unknownDtype(const char *kernel, int32_t dtype) {
  fatal("%s: unknown dtype %d (expected %d for f32 or %d for bf16)", kernel,
        dtype, ZRT_F32, ZRT_BF16);
}

/// Bytes per element of `dtype`; an unknown one stops the job naming `kernel`.
inline int64_t dtypeSize(const char *kernel, int32_t dtype) {
  switch (dtype) {
  case ZRT_F32:
    return 4;
  case ZRT_BF16:
    return 2;
  }
  unknownDtype(kernel, dtype);
}

/// Calls fn(T{}) with T = float or Bf16 according to `dtype`. Host code: the
/// entry points cast their void pointers to T inside fn and launch kernel<T>.
template <typename Fn>
inline void dispatchDtype(const char *kernel, int32_t dtype, Fn &&fn) {
  switch (dtype) {
  case ZRT_F32:
    fn(float{});
    return;
  case ZRT_BF16:
    fn(Bf16{});
    return;
  }
  unknownDtype(kernel, dtype);
}

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

//===--- Scratch ----------------------------------------------------------===//

/// Kernel-private scratch from the stream-ordered allocator: allocated on the
/// compute stream when constructed, freed on it when destroyed, i.e. after
/// every kernel the entry point enqueued in between. It lives only for one
/// call, holds no model state, and so is not charged to the ledger (zrt_alloc
/// would charge it and would free it at once, before the kernels ran).
class Scratch {
public:
  Scratch(cudaStream_t stream, size_t bytes) : stream(stream) {
    if (bytes > 0)
      ZRT_CUDA_CHECK(cudaMallocAsync(&ptr, bytes, stream));
  }
  ~Scratch() {
    if (ptr)
      ZRT_CUDA_CHECK(cudaFreeAsync(ptr, stream));
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;

  template <typename U> U *as(size_t byteOffset = 0) const {
    return static_cast<U *>(
        static_cast<void *>(static_cast<char *>(ptr) + byteOffset));
  }

private:
  cudaStream_t stream;
  void *ptr = nullptr;
};

/// `bytes` rounded up to a multiple of 256, for carving one Scratch into
/// several aligned arrays.
inline size_t alignScratch(size_t bytes) { return (bytes + 255) / 256 * 256; }

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

/// Enqueues out_k[c] = sum_r src_k(r, c) on `stream`; rows <= 0 gives zeros.
template <typename T, int kOut, typename Src>
void reduceColumns(cudaStream_t stream, const Src &src, int64_t rows,
                   int64_t cols, ColumnOutputs<T, kOut> dst) {
  if (cols <= 0)
    return;
  if (rows <= 0) {
    // Zero bits are 0.0 in float32 and bfloat16 alike.
    for (int k = 0; k < kOut; ++k)
      ZRT_CUDA_CHECK(cudaMemsetAsync(dst.out[k], 0, cols * sizeof(T), stream));
    return;
  }
  int64_t chunks = std::min(ceilDiv(rows, kRowsPerChunk), kMaxRowChunks);
  const int64_t rowsPerChunk = ceilDiv(rows, chunks);
  chunks = ceilDiv(rows, rowsPerChunk); // no empty chunk
  Scratch partials(stream, (size_t)kOut * chunks * cols * sizeof(float));
  dim3 grid((unsigned)ceilDiv(cols, kColTile), (unsigned)chunks);
  dim3 block(kColTile, kRowLanes);
  columnPartialsKernel<kOut><<<grid, block, 0, stream>>>(
      src, rows, cols, rowsPerChunk, partials.as<float>());
  ZRT_CUDA_CHECK_LAUNCH("columnPartialsKernel");
  columnFinalKernel<T, kOut><<<gridFor(cols), kThreads, 0, stream>>>(
      partials.as<float>(), chunks, cols, dst);
  ZRT_CUDA_CHECK_LAUNCH("columnFinalKernel");
}

} // namespace zrt::cuda

#endif // ZRT_CUDA_DEVICE_MATH_CUH
