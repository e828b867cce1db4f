//===- norms_kernels.cuh - LayerNorm and RMSNorm kernels -------*- CUDA -*-===//
//
// The device code of norms.cu (whose comment describes the kernels), in a
// header so that the host emulator of runtime/cuda/tests/emulation compiles
// it too (see device_math.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_NORMS_KERNELS_CUH
#define ZRT_CUDA_NORMS_KERNELS_CUH

#include "cuda/device_math.cuh"

namespace zrt::cuda::norms {

constexpr int kRowsPerBlock = kThreads / 32;
constexpr int64_t kMaxRowBlocks = 1 << 20;

/// The grid of the row kernels: a warp per row, strided beyond
/// kMaxRowBlocks blocks of kThreads.
inline unsigned warpRowBlocks(int64_t rows) {
  return (unsigned)std::min<int64_t>(ceilDiv(rows, kRowsPerBlock),
                                     kMaxRowBlocks);
}

/// Each warp of the grid visits rows warpId, warpId + warps, ...
#define FOR_EACH_WARP_ROW(r, rows)                                             \
  for (int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; \
       r < (rows); r += (int64_t)gridDim.x * (blockDim.x / 32))

//===--- Row reductions ---------------------------------------------------===//

/// kN means over a row, computed in one pass and returned to every lane.
template <int kN> struct RowMeans { float v[kN]; };

/// Lane l calls term(c, acc) for c = l, l + 32, ... < cols, adding the kN
/// terms of column c to acc[k]; the warp then adds the lanes and divides by
/// cols. Every statistic and every backward row sum of both norms goes
/// through here, so they all add in the same, size-determined order.
template <int kN, typename Term>
__device__ RowMeans<kN> rowMeans(int64_t cols, const Term &term) {
  const int lane = threadIdx.x % 32;
  RowMeans<kN> means;
  for (int k = 0; k < kN; ++k)
    means.v[k] = 0.0f;
  for (int64_t c = lane; c < cols; c += 32)
    term(c, means.v);
  for (int k = 0; k < kN; ++k)
    means.v[k] = warpSum(means.v[k]) / (float)cols;
  return means;
}

/// The mean over a row of term(c), in every lane.
template <typename Term>
__device__ float rowMean(int64_t cols, const Term &term) {
  return rowMeans<1>(cols, [&](int64_t c, float *acc) { acc[0] += term(c); })
      .v[0];
}

//===--- LayerNorm --------------------------------------------------------===//

/// dgamma += dy * xHat, dbeta += dy.
template <typename T> struct LayerNormParamGrads {
  const T *x;
  const T *dy;
  const float2 *stats;
  int64_t cols;
  __device__ void operator()(int64_t r, int64_t c, float *acc) const {
    const float2 s = stats[r];
    const float xHat = (load(x, r * cols + c) - s.x) * s.y;
    const float d = load(dy, r * cols + c);
    acc[0] += d * xHat;
    acc[1] += d;
  }
};

/// LayerNorm's rows: the statistics (mean, 1 / sqrt(biased variance + eps))
/// and, from them, a row of dx.
struct LayerNormRows {
  using Value = float2;
  template <typename T> using ParamGrads = LayerNormParamGrads<T>;
  static constexpr int kParams = 2; // dgamma, dbeta

  template <typename T>
  __device__ static float2 stats(const T *row, int64_t cols, float eps) {
    const float mean = rowMean(cols, [&](int64_t c) { return load(row, c); });
    const float variance = rowMean(cols, [&](int64_t c) {
      float d = load(row, c) - mean;
      return d * d;
    });
    return make_float2(mean, 1.0f / sqrtf(variance + eps));
  }

  // With xHat = (x - mean) * rstd and g = dy * gamma:
  //   dx = rstd * (g - mean(g) - xHat * mean(g * xHat)).
  template <typename T>
  __device__ static void dx(const T *row, const T *gamma, const T *dyRow,
                            float2 s, T *dxRow, int64_t cols) {
    // mean(g) and mean(g * xHat), in one pass over the row.
    const RowMeans<2> means = rowMeans<2>(cols, [&](int64_t c, float *acc) {
      float xHat = (load(row, c) - s.x) * s.y;
      float g = load(dyRow, c) * load(gamma, c);
      acc[0] += g;
      acc[1] += g * xHat;
    });
    const float meanG = means.v[0], meanGxHat = means.v[1];
    for (int64_t c = threadIdx.x % 32; c < cols; c += 32) {
      float xHat = (load(row, c) - s.x) * s.y;
      float g = load(dyRow, c) * load(gamma, c);
      store(dxRow, c, s.y * (g - meanG - xHat * meanGxHat));
    }
  }
};

template <typename T>
__global__ void layerNormKernel(const T *x, const T *gamma, const T *beta, T *y,
                                int64_t rows, int64_t cols, float eps) {
  const int lane = threadIdx.x % 32;
  FOR_EACH_WARP_ROW(r, rows) {
    const T *row = x + r * cols;
    const float2 s = LayerNormRows::stats(row, cols, eps);
    for (int64_t c = lane; c < cols; c += 32) {
      float xHat = (load(row, c) - s.x) * s.y;
      store(y + r * cols, c, xHat * load(gamma, c) + load(beta, c));
    }
  }
}

//===--- RMSNorm ----------------------------------------------------------===//

/// dgamma += dy * x * inv.
template <typename T> struct RmsNormParamGrad {
  const T *x;
  const T *dy;
  const float *invs;
  int64_t cols;
  __device__ void operator()(int64_t r, int64_t c, float *acc) const {
    acc[0] += load(dy, r * cols + c) * load(x, r * cols + c) * invs[r];
  }
};

/// RMSNorm's rows: the statistic 1 / sqrt(mean(row^2) + eps) and, from it,
/// a row of dx.
struct RmsNormRows {
  using Value = float;
  template <typename T> using ParamGrads = RmsNormParamGrad<T>;
  static constexpr int kParams = 1; // dgamma

  template <typename T>
  __device__ static float stats(const T *row, int64_t cols, float eps) {
    const float meanSquare = rowMean(cols, [&](int64_t c) {
      float v = load(row, c);
      return v * v;
    });
    return 1.0f / sqrtf(meanSquare + eps);
  }

  // With inv the row's 1 / rms and g = dy * gamma:
  //   dx = inv * g - x * inv^3 * mean(g * x).
  template <typename T>
  __device__ static void dx(const T *row, const T *gamma, const T *dyRow,
                            float inv, T *dxRow, int64_t cols) {
    const float meanGx = rowMean(cols, [&](int64_t c) {
      return load(dyRow, c) * load(gamma, c) * load(row, c);
    });
    const float cubed = inv * inv * inv;
    for (int64_t c = threadIdx.x % 32; c < cols; c += 32) {
      float g = load(dyRow, c) * load(gamma, c);
      store(dxRow, c, inv * g - load(row, c) * cubed * meanGx);
    }
  }
};

template <typename T>
__global__ void rmsNormKernel(const T *x, const T *gamma, T *y, int64_t rows,
                              int64_t cols, float eps) {
  const int lane = threadIdx.x % 32;
  FOR_EACH_WARP_ROW(r, rows) {
    const T *row = x + r * cols;
    const float inv = RmsNormRows::stats(row, cols, eps);
    for (int64_t c = lane; c < cols; c += 32)
      store(y + r * cols, c, load(row, c) * inv * load(gamma, c));
  }
}

//===--- Backward passes (both norms) -------------------------------------===//

/// stats[r] = Norm::stats of row r.
template <typename Norm, typename T>
__global__ void rowStatsKernel(const T *x, typename Norm::Value *stats,
                               int64_t rows, int64_t cols, float eps) {
  FOR_EACH_WARP_ROW(r, rows) {
    const typename Norm::Value s = Norm::stats(x + r * cols, cols, eps);
    if (threadIdx.x % 32 == 0)
      stats[r] = s;
  }
}

/// Row r of dx from the statistics rowStatsKernel left in `stats`.
template <typename Norm, typename T>
__global__ void rowDxKernel(const T *x, const T *gamma, const T *dy,
                            const typename Norm::Value *stats, T *dx,
                            int64_t rows, int64_t cols) {
  FOR_EACH_WARP_ROW(r, rows) {
    Norm::dx(x + r * cols, gamma, dy + r * cols, stats[r], dx + r * cols, cols);
  }
}

#undef FOR_EACH_WARP_ROW

} // namespace zrt::cuda::norms

#endif // ZRT_CUDA_NORMS_KERNELS_CUH
