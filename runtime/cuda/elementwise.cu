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
//===----------------------------------------------------------------------===//

#include "cuda/device_math.cuh"

#include <type_traits>

namespace zrt::cuda {

namespace {

//===--- The pointwise map ------------------------------------------------===//

template <typename T, int kIn, int kOut> struct MapArgs {
  const T *in[kIn];
  T *out[kOut];
};

/// Elements [0, packs * kSize) go as packs, the rest one by one.
template <typename T, int kIn, int kOut, typename Op>
__global__ void mapKernel(Op op, MapArgs<T, kIn, kOut> args, int64_t n,
                          int64_t packs) {
  constexpr int kSize = Pack<T>::kSize;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int64_t p = tid; p < packs; p += stride) {
    Pack<T> in[kIn], out[kOut];
    for (int k = 0; k < kIn; ++k)
      in[k] = loadPack(args.in[k], p * kSize);
#pragma unroll
    for (int j = 0; j < kSize; ++j) {
      float x[kIn], y[kOut];
      for (int k = 0; k < kIn; ++k)
        x[k] = toFloat(in[k].v[j]);
      op(x, y);
      for (int k = 0; k < kOut; ++k)
        out[k].v[j] = fromFloat<T>(y[k]);
    }
    for (int k = 0; k < kOut; ++k)
      storePack(args.out[k], p * kSize, out[k]);
  }
  for (int64_t i = packs * kSize + tid; i < n; i += stride) {
    float x[kIn], y[kOut];
    for (int k = 0; k < kIn; ++k)
      x[k] = load(args.in[k], i);
    op(x, y);
    for (int k = 0; k < kOut; ++k)
      store(args.out[k], i, y[k]);
  }
}

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
    bool aligned = true;
    MapArgs<T, kIn, kOut> args;
    for (int k = 0; k < kIn; ++k) {
      args.in[k] = static_cast<const T *>(in[k]);
      aligned = aligned && isAligned16(in[k]);
    }
    for (int k = 0; k < kOut; ++k) {
      args.out[k] = static_cast<T *>(out[k]);
      aligned = aligned && isAligned16(out[k]);
    }
    constexpr int kSize = Pack<T>::kSize;
    const int64_t packs = aligned ? n / kSize : 0;
    const int64_t work = std::max<int64_t>(packs, n - packs * kSize);
    mapKernel<T, kIn, kOut><<<gridFor(work), kThreads, 0, computeStream(ctx)>>>(
        op, args, n, packs);
    ZRT_CUDA_CHECK_LAUNCH(kernel);
  });
}

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

/// 1 / (1 + exp(-g)): saturates to 0 or 1 without overflow trouble (exp(-g)
/// may be inf, and 1 / inf is 0), as in the CPU backend.
__device__ __forceinline__ float sigmoid(float g) {
  return 1.0f / (1.0f + expf(-g));
}

struct AddOp {
  __device__ void operator()(const float *x, float *y) const {
    y[0] = x[0] + x[1];
  }
};

struct ReluOp {
  __device__ void operator()(const float *x, float *y) const {
    y[0] = x[0] > 0.0f ? x[0] : 0.0f;
  }
};

// Inputs: x, dy.
struct ReluGradOp {
  __device__ void operator()(const float *x, float *y) const {
    y[0] = x[0] > 0.0f ? x[1] : 0.0f;
  }
};

struct GeluOp {
  __device__ void operator()(const float *x, float *y) const {
    float v = x[0];
    float u = kSqrt2OverPi * (v + kCubic * v * v * v);
    y[0] = 0.5f * v * (1.0f + tanhf(u));
  }
};

// Inputs: x, dy.
struct GeluGradOp {
  __device__ void operator()(const float *x, float *y) const {
    float v = x[0];
    float u = kSqrt2OverPi * (v + kCubic * v * v * v);
    float t = tanhf(u);
    float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * v * v);
    float local = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
    y[0] = x[1] * local;
  }
};

// Inputs: gate, up.
struct SwigluOp {
  __device__ void operator()(const float *x, float *y) const {
    float g = x[0];
    y[0] = g * sigmoid(g) * x[1];
  }
};

// Inputs: gate, up, dy; outputs: dgate, dup. d silu(g) / dg = s + g s (1 - s).
struct SwigluGradOp {
  __device__ void operator()(const float *x, float *y) const {
    float g = x[0], u = x[1], d = x[2];
    float s = sigmoid(g);
    y[0] = d * u * (s + g * s * (1.0f - s));
    y[1] = d * g * s;
  }
};

//===--- Bias -------------------------------------------------------------===//

/// y[r, c] = x[r, c] + bias[c]. With kVec, cols is a multiple of the pack
/// size and every pointer is aligned, so a pack never straddles two rows and
/// its bias pack starts at an aligned column.
template <typename T, bool kVec>
__global__ void biasAddKernel(const T *x, const T *bias, T *y, int64_t n,
                              int64_t cols) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if constexpr (kVec) {
    constexpr int kSize = Pack<T>::kSize;
    for (int64_t p = tid; p < n / kSize; p += stride) {
      int64_t i = p * kSize;
      Pack<T> xs = loadPack(x, i), bs = loadPack(bias, i % cols), ys;
#pragma unroll
      for (int j = 0; j < kSize; ++j)
        ys.v[j] = fromFloat<T>(toFloat(xs.v[j]) + toFloat(bs.v[j]));
      storePack(y, i, ys);
    }
  } else {
    for (int64_t i = tid; i < n; i += stride)
      store(y, i, load(x, i) + load(bias, i % cols));
  }
}

//===--- Cast -------------------------------------------------------------===//

template <typename S, typename D>
__global__ void castKernel(const S *src, D *dst, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    store(dst, i, load(src, i));
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
      biasAddKernel<T, true><<<gridFor(n / kSize), kThreads, 0, stream>>>(
          static_cast<const T *>(x), static_cast<const T *>(bias),
          static_cast<T *>(y), n, cols);
    else
      biasAddKernel<T, false><<<gridFor(n), kThreads, 0, stream>>>(
          static_cast<const T *>(x), static_cast<const T *>(bias),
          static_cast<T *>(y), n, cols);
    ZRT_CUDA_CHECK_LAUNCH("zrt_bias_add");
  });
}

namespace {
template <typename T> struct SumRowsSrc {
  const T *x;
  int64_t cols;
  __device__ void operator()(int64_t r, int64_t c, float *acc) const {
    acc[0] += load(x, r * cols + c);
  }
};
} // namespace

void sumRows(zrt_context *ctx, int32_t dtype, const void *x, void *y,
             int64_t rows, int64_t cols) {
  dispatchDtype("zrt_sum_rows", dtype, [&](auto tag) {
    using T = decltype(tag);
    reduceColumns<T, 1>(computeStream(ctx),
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
  const int64_t elem = dtypeSize("zrt_slice_cols", dtype);
  if (rows <= 0 || size == 0)
    return;
  ZRT_CUDA_CHECK(cudaMemcpy2DAsync(
      y, size * elem, static_cast<const char *>(x) + offset * elem, cols * elem,
      size * elem, rows, cudaMemcpyDeviceToDevice, computeStream(ctx)));
}

void sliceColsGrad(zrt_context *ctx, int32_t dtype, const void *dy, void *dx,
                   int64_t rows, int64_t cols, int64_t offset, int64_t size) {
  checkBlock("zrt_slice_cols_grad", cols, offset, size);
  const int64_t elem = dtypeSize("zrt_slice_cols_grad", dtype);
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
        castKernel<S, D><<<gridFor(n), kThreads, 0, computeStream(ctx)>>>(
            static_cast<const S *>(src), static_cast<D *>(dst), n);
        ZRT_CUDA_CHECK_LAUNCH("zrt_cast");
      }
    });
  });
}

} // namespace zrt::cuda
