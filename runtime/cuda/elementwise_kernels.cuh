//===- elementwise_kernels.cuh - Pointwise, bias and cast kernels -*- CUDA -*-//
//
// The device code of elementwise.cu (whose comment describes the kernels),
// in a header so that the host emulator of runtime/cuda/tests/emulation
// compiles it too (see device_math.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_ELEMENTWISE_KERNELS_CUH
#define ZRT_CUDA_ELEMENTWISE_KERNELS_CUH

#include "cuda/device_math.cuh"

namespace zrt::cuda::elementwise {

//===--- The pointwise map ------------------------------------------------===//

template <typename T, int kIn, int kOut> struct MapArgs {
  const T *in[kIn];
  T *out[kOut];
  /// Every tensor 16-byte aligned: the packed path may run (planMap).
  bool aligned = true;
};

/// A map's kernel arguments, on the host.
template <typename T, int kIn, int kOut>
inline MapArgs<T, kIn, kOut> makeMapArgs(const void *const (&in)[kIn],
                                         void *const (&out)[kOut]) {
  MapArgs<T, kIn, kOut> args;
  for (int k = 0; k < kIn; ++k) {
    args.in[k] = static_cast<const T *>(in[k]);
    args.aligned = args.aligned && isAligned16(in[k]);
  }
  for (int k = 0; k < kOut; ++k) {
    args.out[k] = static_cast<T *>(out[k]);
    args.aligned = args.aligned && isAligned16(out[k]);
  }
  return args;
}

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

/// mapKernel's launch over n elements: `packs` 16-byte packs when every
/// pointer is aligned (none otherwise), the rest one by one, on `blocks`
/// blocks of kThreads.
struct MapPlan {
  int64_t packs;
  unsigned blocks;
};
template <typename T> inline MapPlan planMap(int64_t n, bool aligned) {
  constexpr int kSize = Pack<T>::kSize;
  const int64_t packs = aligned ? n / kSize : 0;
  const int64_t work = std::max<int64_t>(packs, n - packs * kSize);
  return {packs, gridFor(work)};
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

//===--- Column sums ------------------------------------------------------===//

template <typename T> struct SumRowsSrc {
  const T *x;
  int64_t cols;
  __device__ void operator()(int64_t r, int64_t c, float *acc) const {
    acc[0] += load(x, r * cols + c);
  }
};

} // namespace zrt::cuda::elementwise

#endif // ZRT_CUDA_ELEMENTWISE_KERNELS_CUH
