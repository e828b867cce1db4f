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
//===----------------------------------------------------------------------===//

#include "cuda/device_math.cuh"

namespace zrt::cuda {

namespace {

constexpr int kRowsPerBlock = kThreads / 32;
constexpr int64_t kMaxRowBlocks = 1 << 20;

unsigned warpRowBlocks(int64_t rows) {
  return (unsigned)std::min<int64_t>(ceilDiv(rows, kRowsPerBlock),
                                     kMaxRowBlocks);
}

/// Each warp of the grid visits rows warpId, warpId + warps, ...
#define FOR_EACH_WARP_ROW(r, rows)                                             \
  for (int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; \
       r < (rows); r += (int64_t)gridDim.x * (blockDim.x / 32))

/// (mean, 1 / sqrt(biased variance + eps)) of a row, in every lane.
template <typename T>
__device__ float2 layerNormStats(const T *row, int64_t cols, float eps) {
  const int lane = threadIdx.x % 32;
  float sum = 0.0f;
  for (int64_t c = lane; c < cols; c += 32)
    sum += load(row, c);
  const float mean = warpSum(sum) / (float)cols;
  float squares = 0.0f;
  for (int64_t c = lane; c < cols; c += 32) {
    float d = load(row, c) - mean;
    squares += d * d;
  }
  squares = warpSum(squares);
  return make_float2(mean, 1.0f / sqrtf(squares / (float)cols + eps));
}

/// 1 / sqrt(mean(row^2) + eps), in every lane.
template <typename T>
__device__ float rmsInv(const T *row, int64_t cols, float eps) {
  const int lane = threadIdx.x % 32;
  float squares = 0.0f;
  for (int64_t c = lane; c < cols; c += 32) {
    float v = load(row, c);
    squares += v * v;
  }
  squares = warpSum(squares);
  return 1.0f / sqrtf(squares / (float)cols + eps);
}

//===--- LayerNorm --------------------------------------------------------===//

template <typename T>
__global__ void layerNormKernel(const T *x, const T *gamma, const T *beta, T *y,
                                int64_t rows, int64_t cols, float eps) {
  const int lane = threadIdx.x % 32;
  FOR_EACH_WARP_ROW(r, rows) {
    const T *row = x + r * cols;
    const float2 s = layerNormStats(row, cols, eps);
    for (int64_t c = lane; c < cols; c += 32) {
      float xHat = (load(row, c) - s.x) * s.y;
      store(y + r * cols, c, xHat * load(gamma, c) + load(beta, c));
    }
  }
}

template <typename T>
__global__ void layerNormStatsKernel(const T *x, float2 *stats, int64_t rows,
                                     int64_t cols, float eps) {
  FOR_EACH_WARP_ROW(r, rows) {
    const float2 s = layerNormStats(x + r * cols, cols, eps);
    if (threadIdx.x % 32 == 0)
      stats[r] = s;
  }
}

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

// With xHat = (x - mean) * rstd and g = dy * gamma:
//   dx = rstd * (g - mean(g) - xHat * mean(g * xHat)).
template <typename T>
__global__ void layerNormDxKernel(const T *x, const T *gamma, const T *dy,
                                  const float2 *stats, T *dx, int64_t rows,
                                  int64_t cols) {
  const int lane = threadIdx.x % 32;
  FOR_EACH_WARP_ROW(r, rows) {
    const T *row = x + r * cols;
    const T *dyRow = dy + r * cols;
    const float2 s = stats[r];
    float meanG = 0.0f, meanGxHat = 0.0f;
    for (int64_t c = lane; c < cols; c += 32) {
      float xHat = (load(row, c) - s.x) * s.y;
      float g = load(dyRow, c) * load(gamma, c);
      meanG += g;
      meanGxHat += g * xHat;
    }
    meanG = warpSum(meanG) / (float)cols;
    meanGxHat = warpSum(meanGxHat) / (float)cols;
    for (int64_t c = lane; c < cols; c += 32) {
      float xHat = (load(row, c) - s.x) * s.y;
      float g = load(dyRow, c) * load(gamma, c);
      store(dx + r * cols, c, s.y * (g - meanG - xHat * meanGxHat));
    }
  }
}

//===--- RMSNorm ----------------------------------------------------------===//

template <typename T>
__global__ void rmsNormKernel(const T *x, const T *gamma, T *y, int64_t rows,
                              int64_t cols, float eps) {
  const int lane = threadIdx.x % 32;
  FOR_EACH_WARP_ROW(r, rows) {
    const T *row = x + r * cols;
    const float inv = rmsInv(row, cols, eps);
    for (int64_t c = lane; c < cols; c += 32)
      store(y + r * cols, c, load(row, c) * inv * load(gamma, c));
  }
}

template <typename T>
__global__ void rmsStatsKernel(const T *x, float *invs, int64_t rows,
                               int64_t cols, float eps) {
  FOR_EACH_WARP_ROW(r, rows) {
    const float inv = rmsInv(x + r * cols, cols, eps);
    if (threadIdx.x % 32 == 0)
      invs[r] = inv;
  }
}

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

// With inv the row's 1 / rms and g = dy * gamma:
//   dx = inv * g - x * inv^3 * mean(g * x).
template <typename T>
__global__ void rmsNormDxKernel(const T *x, const T *gamma, const T *dy,
                                const float *invs, T *dx, int64_t rows,
                                int64_t cols) {
  const int lane = threadIdx.x % 32;
  FOR_EACH_WARP_ROW(r, rows) {
    const T *row = x + r * cols;
    const T *dyRow = dy + r * cols;
    const float inv = invs[r];
    float meanGx = 0.0f;
    for (int64_t c = lane; c < cols; c += 32)
      meanGx += load(dyRow, c) * load(gamma, c) * load(row, c);
    meanGx = warpSum(meanGx) / (float)cols;
    const float cubed = inv * inv * inv;
    for (int64_t c = lane; c < cols; c += 32) {
      float g = load(dyRow, c) * load(gamma, c);
      store(dx + r * cols, c, inv * g - load(row, c) * cubed * meanGx);
    }
  }
}

#undef FOR_EACH_WARP_ROW

} // namespace

void layerNorm(zrt_context *ctx, int32_t dtype, const void *x,
               const void *gamma, const void *beta, void *y, int64_t rows,
               int64_t cols, float eps) {
  dispatchDtype("zrt_layer_norm", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0 || cols <= 0)
      return;
    layerNormKernel<T>
        <<<warpRowBlocks(rows), kThreads, 0, computeStream(ctx)>>>(
            static_cast<const T *>(x), static_cast<const T *>(gamma),
            static_cast<const T *>(beta), static_cast<T *>(y), rows, cols, eps);
    ZRT_CUDA_CHECK_LAUNCH("zrt_layer_norm");
  });
}

void layerNormGrad(zrt_context *ctx, int32_t dtype, const void *x,
                   const void *gamma, const void *dy, void *dx, void *dgamma,
                   void *dbeta, int64_t rows, int64_t cols, float eps) {
  dispatchDtype("zrt_layer_norm_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (cols <= 0)
      return;
    cudaStream_t stream = computeStream(ctx);
    const T *xs = static_cast<const T *>(x);
    const T *dys = static_cast<const T *>(dy);
    const int64_t liveRows = std::max<int64_t>(rows, 0);
    Scratch stats(stream, liveRows * sizeof(float2));
    if (liveRows > 0) {
      layerNormStatsKernel<T><<<warpRowBlocks(liveRows), kThreads, 0, stream>>>(
          xs, stats.as<float2>(), liveRows, cols, eps);
      ZRT_CUDA_CHECK_LAUNCH("zrt_layer_norm_grad");
    }
    // Zeros when there are no rows.
    reduceColumns<T, 2>(
        stream, LayerNormParamGrads<T>{xs, dys, stats.as<float2>(), cols},
        liveRows, cols,
        ColumnOutputs<T, 2>{
            {static_cast<T *>(dgamma), static_cast<T *>(dbeta)}});
    if (liveRows > 0) {
      layerNormDxKernel<T><<<warpRowBlocks(liveRows), kThreads, 0, stream>>>(
          xs, static_cast<const T *>(gamma), dys, stats.as<float2>(),
          static_cast<T *>(dx), liveRows, cols);
      ZRT_CUDA_CHECK_LAUNCH("zrt_layer_norm_grad");
    }
  });
}

void rmsNorm(zrt_context *ctx, int32_t dtype, const void *x, const void *gamma,
             void *y, int64_t rows, int64_t cols, float eps) {
  dispatchDtype("zrt_rms_norm", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0 || cols <= 0)
      return;
    rmsNormKernel<T><<<warpRowBlocks(rows), kThreads, 0, computeStream(ctx)>>>(
        static_cast<const T *>(x), static_cast<const T *>(gamma),
        static_cast<T *>(y), rows, cols, eps);
    ZRT_CUDA_CHECK_LAUNCH("zrt_rms_norm");
  });
}

void rmsNormGrad(zrt_context *ctx, int32_t dtype, const void *x,
                 const void *gamma, const void *dy, void *dx, void *dgamma,
                 int64_t rows, int64_t cols, float eps) {
  dispatchDtype("zrt_rms_norm_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (cols <= 0)
      return;
    cudaStream_t stream = computeStream(ctx);
    const T *xs = static_cast<const T *>(x);
    const T *dys = static_cast<const T *>(dy);
    const int64_t liveRows = std::max<int64_t>(rows, 0);
    Scratch invs(stream, liveRows * sizeof(float));
    if (liveRows > 0) {
      rmsStatsKernel<T><<<warpRowBlocks(liveRows), kThreads, 0, stream>>>(
          xs, invs.as<float>(), liveRows, cols, eps);
      ZRT_CUDA_CHECK_LAUNCH("zrt_rms_norm_grad");
    }
    reduceColumns<T, 1>(
        stream, RmsNormParamGrad<T>{xs, dys, invs.as<float>(), cols}, liveRows,
        cols, ColumnOutputs<T, 1>{{static_cast<T *>(dgamma)}});
    if (liveRows > 0) {
      rmsNormDxKernel<T><<<warpRowBlocks(liveRows), kThreads, 0, stream>>>(
          xs, static_cast<const T *>(gamma), dys, invs.as<float>(),
          static_cast<T *>(dx), liveRows, cols);
      ZRT_CUDA_CHECK_LAUNCH("zrt_rms_norm_grad");
    }
  });
}

} // namespace zrt::cuda
