//===- norms.cu - LayerNorm and RMSNorm, forward and backward -------------===//
//
// One warp per row (as llm.c): the normalised widths (768..8192) are a few
// dozen elements a lane, a row's statistics are warp shuffles with no shared
// memory or block barrier, and the row stays in L1 between the passes over
// it. The statistics are those of the CPU backend, in float32: LayerNorm's
// mean, then the mean of squared deviations (biased variance, two passes so
// a large mean does not cancel the spread), RMSNorm's mean of squares;
// 1 / sqrt(. + eps) with IEEE sqrt and division.
//
// The backward passes recompute the row statistics (the ABI passes none)
// into scratch first, then reduce dgamma (and dbeta) over the rows with the
// deterministic column reduction of device_math.cuh, and only then write dx:
// dx last means the kernels are right even if a caller passes dx == dy or
// dx == x, which the CPU loops also tolerate.
//
// Each norm is a struct of its per-row pieces (LayerNormRows, RmsNormRows):
// its statistics, used by the forward kernel and the backward one alike, a
// row of dx, and its parameter-gradient terms. Every row sum goes through
// rowMeans, and one backward routine (normGrad) serves both norms.
//
// The kernels are in norms_kernels.cuh, which the host emulator of
// tests/emulation compiles too (zrt-cuda-kernels-emulated); this file holds
// their launches.
//
//===----------------------------------------------------------------------===//

#include "cuda/launch_utils.cuh"
#include "cuda/norms_kernels.cuh"

namespace zrt::cuda {

using namespace norms;

namespace {

/// Every row's statistics into scratch (the ABI passes none), the parameter
/// gradients summed over the rows (zeros when there are none), then dx,
/// last (see the file comment). `kernel` names the entry point for the
/// launch checks (ZRT_CUDA_CHECK_LAUNCH may ignore it).
template <typename Norm, typename T>
void normGrad([[maybe_unused]] const char *kernel, zrt_context *ctx,
              const T *x, const T *gamma, const T *dy, T *dx,
              ColumnOutputs<T, Norm::kParams> params, int64_t rows,
              int64_t cols, float eps) {
  using Value = typename Norm::Value;
  if (cols <= 0)
    return;
  const int64_t liveRows = std::max<int64_t>(rows, 0);
  cudaStream_t stream = computeStream(ctx);
  Scratch scratch(ctx, liveRows * sizeof(Value));
  const Value *stats = scratch.as<Value>();
  if (liveRows > 0) {
    launchKernel(rowStatsKernel<Norm, T>, warpRowBlocks(liveRows), kThreads, 0,
                 stream, x, scratch.as<Value>(), liveRows, cols, eps);
    ZRT_CUDA_CHECK_LAUNCH(kernel);
  }
  reduceColumns<T, Norm::kParams>(
      ctx, typename Norm::template ParamGrads<T>{x, dy, stats, cols},
      liveRows, cols, params);
  if (liveRows > 0) {
    launchKernel(rowDxKernel<Norm, T>, warpRowBlocks(liveRows), kThreads, 0,
                 stream, x, gamma, dy, stats, dx, liveRows, cols);
    ZRT_CUDA_CHECK_LAUNCH(kernel);
  }
}

} // namespace

void layerNorm(zrt_context *ctx, int32_t dtype, const void *x,
               const void *gamma, const void *beta, void *y, int64_t rows,
               int64_t cols, float eps) {
  dispatchDtype("zrt_layer_norm", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0 || cols <= 0)
      return;
    launchKernel(layerNormKernel<T>, warpRowBlocks(rows), kThreads, 0,
                 computeStream(ctx), static_cast<const T *>(x),
                 static_cast<const T *>(gamma), static_cast<const T *>(beta),
                 static_cast<T *>(y), rows, cols, eps);
    ZRT_CUDA_CHECK_LAUNCH("zrt_layer_norm");
  });
}

void layerNormGrad(zrt_context *ctx, int32_t dtype, const void *x,
                   const void *gamma, const void *dy, void *dx, void *dgamma,
                   void *dbeta, int64_t rows, int64_t cols, float eps) {
  dispatchDtype("zrt_layer_norm_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    normGrad<LayerNormRows>("zrt_layer_norm_grad", ctx,
                            static_cast<const T *>(x),
                            static_cast<const T *>(gamma),
                            static_cast<const T *>(dy), static_cast<T *>(dx),
                            ColumnOutputs<T, 2>{{static_cast<T *>(dgamma),
                                                 static_cast<T *>(dbeta)}},
                            rows, cols, eps);
  });
}

void rmsNorm(zrt_context *ctx, int32_t dtype, const void *x, const void *gamma,
             void *y, int64_t rows, int64_t cols, float eps) {
  dispatchDtype("zrt_rms_norm", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0 || cols <= 0)
      return;
    launchKernel(rmsNormKernel<T>, warpRowBlocks(rows), kThreads, 0,
                 computeStream(ctx), static_cast<const T *>(x),
                 static_cast<const T *>(gamma), static_cast<T *>(y), rows, cols,
                 eps);
    ZRT_CUDA_CHECK_LAUNCH("zrt_rms_norm");
  });
}

void rmsNormGrad(zrt_context *ctx, int32_t dtype, const void *x,
                 const void *gamma, const void *dy, void *dx, void *dgamma,
                 int64_t rows, int64_t cols, float eps) {
  dispatchDtype("zrt_rms_norm_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    normGrad<RmsNormRows>(
        "zrt_rms_norm_grad", ctx, static_cast<const T *>(x),
        static_cast<const T *>(gamma), static_cast<const T *>(dy),
        static_cast<T *>(dx), ColumnOutputs<T, 1>{{static_cast<T *>(dgamma)}},
        rows, cols, eps);
  });
}

} // namespace zrt::cuda
