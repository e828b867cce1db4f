//===- exact.cu - The exact sums of --deterministic programs --------------===//
//
// zrt_accumulate_exact, zrt_sum_squares_exact and zrt_from_exact on the
// GPU, with core/exact.h's arithmetic (__int128 in device code): the same
// bits as the CPU backend. accumulate_exact and from_exact are elementwise;
// sum_squares_exact is a two-pass reduction (per-block trees in shared
// memory, then one block), whose order does not matter: integer sums.
//
// The GPU runs these kernels, but a --deterministic program itself runs on
// the CPU backend only: NCCL has no 128-bit sum (nccl_collectives.cpp
// refuses ZRT_EXACT), and zrt_run refuses such a program on a device.
//
// The kernels are in exact_kernels.cuh, which the host emulator of
// tests/emulation compiles too (zrt-cuda-kernels-emulated); this file holds
// their launches.
//
//===----------------------------------------------------------------------===//

#include "cuda/exact_kernels.cuh"
#include "cuda/launch_utils.cuh"

namespace zrt::cuda {

using namespace fixed;

void accumulateExact(zrt_context *ctx, int32_t dtype, const void *x,
                     void *acc, int64_t n) {
  dispatchDtype("zrt_accumulate_exact", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0)
      return;
    launchKernel(accumulateExactKernel<T>, gridFor(n), kThreads, 0,
                 computeStream(ctx), static_cast<const T *>(x),
                 static_cast<Exact *>(acc), n);
    ZRT_CUDA_CHECK_LAUNCH("zrt_accumulate_exact");
  });
}

void sumSquaresExact(zrt_context *ctx, int32_t dtype, const void *x,
                     void *acc, int64_t n) {
  dispatchDtype("zrt_sum_squares_exact", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0)
      return; // acc[0] += 0
    cudaStream_t stream = computeStream(ctx);
    const int64_t blocks = sumSquaresExactBlocks(n);
    Scratch partials(ctx, blocks * sizeof(Exact));
    launchKernel(sumSquaresExactPartialKernel<T>, (unsigned)blocks,
                 kExactThreads, 0, stream, static_cast<const T *>(x), n,
                 partials.as<Exact>());
    ZRT_CUDA_CHECK_LAUNCH("zrt_sum_squares_exact");
    launchKernel(sumSquaresExactFinalKernel, 1, kExactThreads, 0, stream,
                 partials.as<const Exact>(), blocks, static_cast<Exact *>(acc));
    ZRT_CUDA_CHECK_LAUNCH("zrt_sum_squares_exact");
  });
}

void fromExact(zrt_context *ctx, const void *exact, float *out, int64_t n) {
  if (n <= 0)
    return;
  launchKernel(fromExactKernel, gridFor(n), kThreads, 0, computeStream(ctx),
               static_cast<const Exact *>(exact), out, n);
  ZRT_CUDA_CHECK_LAUNCH("zrt_from_exact");
}

} // namespace zrt::cuda
