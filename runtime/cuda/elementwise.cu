//===- elementwise.cu - Elementwise kernels, bias, column slices, cast ----===//
//
// The pointwise kernels (add, ReLU, GELU, SwiGLU and their gradients) share
// one grid-stride kernel, mapKernel, parameterised by a functor that maps
// kIn float32 inputs to kOut float32 outputs: the formulas are written once,
// exactly as in the CPU backend (runtime/cpu/*.cpp), and the memory access
// is written once. When every pointer is 16-byte aligned the body moves
// 16-byte packs (4 floats, 8 bf16) and the last n % pack elements go one by
// one; otherwise everything goes one by one. Each thread reads all inputs of
// an element (or pack) before writing its outputs, which is what the
// in-place uses zrt.h allows (y == a, dx == dy, ...) need; pointers are
// therefore not __restrict__.
//
// sum_rows is the column reduction of device_math.cuh (deterministic, float32
// partial sums). The column slices are strided copies, which
// cudaMemcpy2DAsync does without a kernel of ours.
//
// The kernels are in elementwise_kernels.cuh, which the host emulator of
// tests/emulation compiles too (zrt-cuda-kernels-emulated); this file holds
// their launches.
//
//===----------------------------------------------------------------------===//

#include "cuda/elementwise_kernels.cuh"
#include "cuda/launch_utils.cuh"

#include <type_traits>

namespace zrt::cuda {

using namespace elementwise;

namespace {

/// Validates the dtype, then (for n > 0) enqueues mapKernel on the compute
/// stream.
template <int kIn, int kOut, typename Op>
void launchMap(zrt_context *ctx, const char *kernel, int32_t dtype, Op op,
               const void *const (&in)[kIn], void *const (&out)[kOut],
               int64_t n) {
  dispatchDtype(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0)
      return;
    const MapArgs<T, kIn, kOut> args = makeMapArgs<T>(in, out);
    const MapPlan plan = planMap<T>(n, args.aligned);
    launchKernel(mapKernel<T, kIn, kOut, Op>, plan.blocks, kThreads, 0,
                 computeStream(ctx), op, args, n, plan.packs);
    ZRT_CUDA_CHECK_LAUNCH(kernel);
  });
}

//===--- Column slices ----------------------------------------------------===//

void checkBlock(const char *kernel, int64_t cols, int64_t offset,
                int64_t size) {
  if (offset < 0 || size < 0 || offset + size > cols)
    fatal("%s: columns [%lld, %lld) lie outside a matrix of %lld columns",
          kernel, (long long)offset, (long long)(offset + size),
          (long long)cols);
}

} // namespace

//===--- Entry points -----------------------------------------------------===//

void biasAdd(zrt_context *ctx, int32_t dtype, const void *x, const void *bias,
             void *y, int64_t rows, int64_t cols) {
  dispatchDtype("zrt_bias_add", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0 || cols <= 0)
      return;
    const int64_t n = rows * cols;
    constexpr int kSize = Pack<T>::kSize;
    cudaStream_t stream = computeStream(ctx);
    if (cols % kSize == 0 && isAligned16(x) && isAligned16(bias) &&
        isAligned16(y))
      launchKernel(biasAddKernel<T, true>, gridFor(n / kSize), kThreads, 0,
                   stream, static_cast<const T *>(x),
                   static_cast<const T *>(bias), static_cast<T *>(y), n, cols);
    else
      launchKernel(biasAddKernel<T, false>, gridFor(n), kThreads, 0, stream,
                   static_cast<const T *>(x), static_cast<const T *>(bias),
                   static_cast<T *>(y), n, cols);
    ZRT_CUDA_CHECK_LAUNCH("zrt_bias_add");
  });
}

void sumRows(zrt_context *ctx, int32_t dtype, const void *x, void *y,
             int64_t rows, int64_t cols) {
  dispatchDtype("zrt_sum_rows", dtype, [&](auto tag) {
    using T = decltype(tag);
    reduceColumns<T, 1>(ctx,
                        SumRowsSrc<T>{static_cast<const T *>(x), cols}, rows,
                        cols, ColumnOutputs<T, 1>{{static_cast<T *>(y)}});
  });
}

void add(zrt_context *ctx, int32_t dtype, const void *a, const void *b, void *y,
         int64_t n) {
  launchMap<2, 1>(ctx, "zrt_add", dtype, AddOp{}, {a, b}, {y}, n);
}

void relu(zrt_context *ctx, int32_t dtype, const void *x, void *y, int64_t n) {
  launchMap<1, 1>(ctx, "zrt_relu", dtype, ReluOp{}, {x}, {y}, n);
}

void reluGrad(zrt_context *ctx, int32_t dtype, const void *x, const void *dy,
              void *dx, int64_t n) {
  launchMap<2, 1>(ctx, "zrt_relu_grad", dtype, ReluGradOp{}, {x, dy}, {dx}, n);
}

void gelu(zrt_context *ctx, int32_t dtype, const void *x, void *y, int64_t n) {
  launchMap<1, 1>(ctx, "zrt_gelu", dtype, GeluOp{}, {x}, {y}, n);
}

void geluGrad(zrt_context *ctx, int32_t dtype, const void *x, const void *dy,
              void *dx, int64_t n) {
  launchMap<2, 1>(ctx, "zrt_gelu_grad", dtype, GeluGradOp{}, {x, dy}, {dx}, n);
}

void swiglu(zrt_context *ctx, int32_t dtype, const void *gate, const void *up,
            void *y, int64_t n) {
  launchMap<2, 1>(ctx, "zrt_swiglu", dtype, SwigluOp{}, {gate, up}, {y}, n);
}

void swigluGrad(zrt_context *ctx, int32_t dtype, const void *gate,
                const void *up, const void *dy, void *dgate, void *dup,
                int64_t n) {
  launchMap<3, 2>(ctx, "zrt_swiglu_grad", dtype, SwigluGradOp{}, {gate, up, dy},
                  {dgate, dup}, n);
}

void sliceCols(zrt_context *ctx, int32_t dtype, const void *x, void *y,
               int64_t rows, int64_t cols, int64_t offset, int64_t size) {
  checkBlock("zrt_slice_cols", cols, offset, size);
  const int64_t elem = floatDtypeSize("zrt_slice_cols", dtype);
  if (rows <= 0 || size == 0)
    return;
  ZRT_CUDA_CHECK(cudaMemcpy2DAsync(
      y, size * elem, static_cast<const char *>(x) + offset * elem, cols * elem,
      size * elem, rows, cudaMemcpyDeviceToDevice, computeStream(ctx)));
}

void sliceColsGrad(zrt_context *ctx, int32_t dtype, const void *dy, void *dx,
                   int64_t rows, int64_t cols, int64_t offset, int64_t size) {
  checkBlock("zrt_slice_cols_grad", cols, offset, size);
  const int64_t elem = floatDtypeSize("zrt_slice_cols_grad", dtype);
  if (rows <= 0 || cols == 0)
    return;
  cudaStream_t stream = computeStream(ctx);
  // Zero bits are 0.0 in float32 and bfloat16 alike. Only the columns
  // outside the block need it, but one contiguous memset is cheaper than two
  // strided ones.
  ZRT_CUDA_CHECK(cudaMemsetAsync(dx, 0, rows * cols * elem, stream));
  if (size > 0)
    ZRT_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char *>(dx) + offset * elem,
                                     cols * elem, dy, size * elem, size * elem,
                                     rows, cudaMemcpyDeviceToDevice, stream));
}

void cast(zrt_context *ctx, int32_t srcDtype, int32_t dstDtype, const void *src,
          void *dst, int64_t n) {
  dispatchDtype("zrt_cast", srcDtype, [&](auto srcTag) {
    using S = decltype(srcTag);
    dispatchDtype("zrt_cast", dstDtype, [&](auto dstTag) {
      using D = decltype(dstTag);
      if (n <= 0)
        return;
      if constexpr (std::is_same_v<S, D>) {
        // copy() handles src == dst and overlapping ranges.
        cuda::copy(ctx, src, dst, n * (int64_t)sizeof(S));
      } else {
        launchKernel(castKernel<S, D>, gridFor(n), kThreads, 0,
                     computeStream(ctx), static_cast<const S *>(src),
                     static_cast<D *>(dst), n);
        ZRT_CUDA_CHECK_LAUNCH("zrt_cast");
      }
    });
  });
}

} // namespace zrt::cuda
