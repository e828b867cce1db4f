//===- launch_utils.cuh - Host side shared by the launches -----*- CUDA -*-===//
//
// What the kernel families' launch code (the .cu files) shares: the dtype
// dispatch (core/dtype.h's, over __nv_bfloat16), stream-ordered
// scratch, and the launches of device_math.cuh's column reduction. Host
// code under nvcc only; the device code it launches is device_math.cuh's.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_LAUNCH_UTILS_CUH
#define ZRT_CUDA_LAUNCH_UTILS_CUH

#include "core/check.h"
#include "core/dtype.h"
#include "cuda/cuda_check.h"
#include "cuda/device_math.cuh"
#include "cuda/kernels.h"
#include "cuda/launch.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace zrt::cuda {

//===--- Dtypes -----------------------------------------------------------===//

/// Calls fn(T{}) with T = float or Bf16 (__nv_bfloat16) according to
/// `dtype` (core/dtype.h, shared with the CPU backend). Host code: the entry
/// points cast their void pointers to T inside fn and launch kernel<T>.
template <typename Fn>
inline void dispatchDtype(const char *kernel, int32_t dtype, Fn &&fn) {
  dispatchDtypeAs<Bf16>(kernel, dtype, fn);
}

//===--- Scratch ----------------------------------------------------------===//

/// Kernel-private scratch from the stream-ordered allocator: allocated on the
/// compute stream when constructed, freed on it when destroyed, i.e. after
/// every kernel the entry point enqueued in between. It lives only for one
/// call and holds no model state, so it is none of the ledger's categories
/// (zrt_alloc would charge it and would free it at once, before the kernels
/// ran); noteScratch counts it in the runtime workspace instead.
class Scratch {
public:
  Scratch(zrt_context *ctx, size_t bytes)
      : ctx(ctx), stream(computeStream(ctx)), bytes(bytes) {
    if (bytes > 0) {
      ZRT_CUDA_CHECK(cudaMallocAsync(&ptr, bytes, stream));
      noteScratch(ctx, (int64_t)bytes);
    }
  }
  ~Scratch() {
    if (ptr) {
      ZRT_CUDA_CHECK(cudaFreeAsync(ptr, stream));
      noteScratch(ctx, -(int64_t)bytes);
    }
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;

  template <typename U> U *as(size_t byteOffset = 0) const {
    return static_cast<U *>(
        static_cast<void *>(static_cast<char *>(ptr) + byteOffset));
  }

private:
  zrt_context *ctx;
  cudaStream_t stream;
  size_t bytes;
  void *ptr = nullptr;
};

/// `bytes` rounded up to a multiple of 256, for carving one Scratch into
/// several aligned arrays.
inline size_t alignScratch(size_t bytes) { return (bytes + 255) / 256 * 256; }

//===--- Column sums (sum_rows, dgamma, dbeta) ----------------------------===//

/// Enqueues out_k[c] = sum_r src_k(r, c) on the compute stream of `ctx`;
/// rows <= 0 gives zeros.
template <typename T, int kOut, typename Src>
void reduceColumns(zrt_context *ctx, const Src &src, int64_t rows,
                   int64_t cols, ColumnOutputs<T, kOut> dst) {
  cudaStream_t stream = computeStream(ctx);
  if (cols <= 0)
    return;
  if (rows <= 0) {
    // Zero bits are 0.0 in float32 and bfloat16 alike.
    for (int k = 0; k < kOut; ++k)
      ZRT_CUDA_CHECK(cudaMemsetAsync(dst.out[k], 0, cols * sizeof(T), stream));
    return;
  }
  const ColumnPlan plan = planColumns(rows, cols);
  Scratch partials(ctx, (size_t)kOut * plan.chunks * cols * sizeof(float));
  launchKernel(columnPartialsKernel<kOut, Src>, plan.partialsGrid,
               plan.partialsBlock, 0, stream, src, rows, cols,
               plan.rowsPerChunk, partials.as<float>());
  ZRT_CUDA_CHECK_LAUNCH("columnPartialsKernel");
  launchKernel(columnFinalKernel<T, kOut>, gridFor(cols), kThreads, 0, stream,
               partials.as<float>(), plan.chunks, cols, dst);
  ZRT_CUDA_CHECK_LAUNCH("columnFinalKernel");
}

} // namespace zrt::cuda

#endif // ZRT_CUDA_LAUNCH_UTILS_CUH
