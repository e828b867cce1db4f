//===- emulated_kernels.cpp - The CUDA kernels on the host emulator -------===//
//
// emulated_kernels.h's entry points: each one is its .cu file's host code
// with every `kernel<<<grid, block, smem, stream>>>(args)` turned into
// launch(grid, block, smem, kernel, args), the grid and block computed by the
// same functions of the *_kernels.cuh headers (planMap, planColumns,
// warpRowBlocks, ...) or the same expressions, scratch from host vectors
// poisoned with 0xff bytes (NaN), and cudaMemsetAsync / CUB done on the host.
// Keep each in step with its .cu file.
//
//===----------------------------------------------------------------------===//

#include "emulated_kernels.h"

#include "core/dtype.h"
#include "cuda/attention_kernels.cuh"
#include "cuda/elementwise_kernels.cuh"
#include "cuda/embedding_kernels.cuh"
#include "cuda/memory_ops_kernels.cuh"
#include "cuda/norms_kernels.cuh"
#include "cuda/optimizer_kernels.cuh"
#include "cuda/rope_kernels.cuh"
#include "cuda/softmax_xent_kernels.cuh"
#include "zero/zrt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

namespace zrt::cuda::emulated {

namespace {

int workerCount = 2;

/// kernel(args...) on every thread of `grid` blocks of `block` threads.
template <typename Kernel, typename... Args>
void launch(dim3 grid, dim3 block, size_t smemBytes, Kernel kernel,
            Args... args) {
  emu::launch(
      grid, block, smemBytes, [&] { kernel(args...); }, workerCount);
}

/// launch_utils.cuh's dispatchDtype.
template <typename Fn> void byDtype(int32_t dtype, Fn &&fn) {
  dispatchDtypeAs<Bf16>("emulated kernel", dtype, fn);
}

/// Kernel scratch (cudaMallocAsync's memory is uninitialised): 0xff bytes,
/// NaN in float and double, so a kernel reading what none wrote shows.
template <typename T> std::vector<T> scratch(size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void *>(v.data()), 0xff, n * sizeof(T));
  return v;
}

/// launch_utils.cuh's reduceColumns.
template <typename T, int kOut, typename Src>
void reduceColumns(const Src &src, int64_t rows, int64_t cols,
                   ColumnOutputs<T, kOut> dst) {
  if (cols <= 0)
    return;
  if (rows <= 0) {
    for (int k = 0; k < kOut; ++k)
      std::memset(static_cast<void *>(dst.out[k]), 0, cols * sizeof(T));
    return;
  }
  const ColumnPlan plan = planColumns(rows, cols);
  std::vector<float> partials = scratch<float>(kOut * plan.chunks * cols);
  launch(plan.partialsGrid, plan.partialsBlock, 0,
         columnPartialsKernel<kOut, Src>, src, rows, cols, plan.rowsPerChunk,
         partials.data());
  launch(gridFor(cols), kThreads, 0, columnFinalKernel<T, kOut>,
         (const float *)partials.data(), plan.chunks, cols, dst);
}

} // namespace

void setWorkers(int workers) { workerCount = std::max(1, workers); }
void setFault(const std::string &fault) { emu::fault = fault; }

//===--- elementwise.cu ---------------------------------------------------===//

namespace {

template <int kIn, int kOut, typename Op>
void launchMap(int32_t dtype, Op op, const void *const (&in)[kIn],
               void *const (&out)[kOut], int64_t n) {
  using namespace elementwise;
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0)
      return;
    const MapArgs<T, kIn, kOut> args = makeMapArgs<T>(in, out);
    const MapPlan plan = planMap<T>(n, args.aligned);
    launch(plan.blocks, kThreads, 0, mapKernel<T, kIn, kOut, Op>, op, args, n,
           plan.packs);
  });
}

} // namespace

void biasAdd(int32_t dtype, const void *x, const void *bias, void *y,
             int64_t rows, int64_t cols) {
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0 || cols <= 0)
      return;
    const int64_t n = rows * cols;
    constexpr int kSize = Pack<T>::kSize;
    auto *xs = static_cast<const T *>(x), *bs = static_cast<const T *>(bias);
    auto *ys = static_cast<T *>(y);
    if (cols % kSize == 0 && isAligned16(x) && isAligned16(bias) &&
        isAligned16(y))
      launch(gridFor(n / kSize), kThreads, 0,
             elementwise::biasAddKernel<T, true>, xs, bs, ys, n, cols);
    else
      launch(gridFor(n), kThreads, 0, elementwise::biasAddKernel<T, false>, xs,
             bs, ys, n, cols);
  });
}

void sumRows(int32_t dtype, const void *x, void *y, int64_t rows,
             int64_t cols) {
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    reduceColumns<T, 1>(
        elementwise::SumRowsSrc<T>{static_cast<const T *>(x), cols}, rows, cols,
        ColumnOutputs<T, 1>{{static_cast<T *>(y)}});
  });
}

void add(int32_t dtype, const void *a, const void *b, void *y, int64_t n) {
  launchMap<2, 1>(dtype, elementwise::AddOp{}, {a, b}, {y}, n);
}
void relu(int32_t dtype, const void *x, void *y, int64_t n) {
  launchMap<1, 1>(dtype, elementwise::ReluOp{}, {x}, {y}, n);
}
void reluGrad(int32_t dtype, const void *x, const void *dy, void *dx,
              int64_t n) {
  launchMap<2, 1>(dtype, elementwise::ReluGradOp{}, {x, dy}, {dx}, n);
}
void gelu(int32_t dtype, const void *x, void *y, int64_t n) {
  launchMap<1, 1>(dtype, elementwise::GeluOp{}, {x}, {y}, n);
}
void geluGrad(int32_t dtype, const void *x, const void *dy, void *dx,
              int64_t n) {
  launchMap<2, 1>(dtype, elementwise::GeluGradOp{}, {x, dy}, {dx}, n);
}
void swiglu(int32_t dtype, const void *gate, const void *up, void *y,
            int64_t n) {
  launchMap<2, 1>(dtype, elementwise::SwigluOp{}, {gate, up}, {y}, n);
}
void swigluGrad(int32_t dtype, const void *gate, const void *up, const void *dy,
                void *dgate, void *dup, int64_t n) {
  launchMap<3, 2>(dtype, elementwise::SwigluGradOp{}, {gate, up, dy},
                  {dgate, dup}, n);
}

void cast(int32_t srcDtype, int32_t dstDtype, const void *src, void *dst,
          int64_t n) {
  byDtype(srcDtype, [&](auto srcTag) {
    using S = decltype(srcTag);
    byDtype(dstDtype, [&](auto dstTag) {
      using D = decltype(dstTag);
      if (n <= 0)
        return;
      if constexpr (std::is_same_v<S, D>)
        std::memmove(dst, src, n * sizeof(S)); // cuda::copy
      else
        launch(gridFor(n), kThreads, 0, elementwise::castKernel<S, D>,
               static_cast<const S *>(src), static_cast<D *>(dst), n);
    });
  });
}

//===--- softmax_xent.cu --------------------------------------------------===//

void softmaxXent(int32_t dtype, const void *logits, const int32_t *labels,
                 float *loss, int64_t rows, int64_t cols, float divisor,
                 DeviceError *errors) {
  using namespace xent;
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t liveRows = std::max<int64_t>(rows, 0);
    std::vector<double> rowLoss = scratch<double>(liveRows);
    if (liveRows > 0)
      launch(rowBlocks(liveRows), kRowThreads, 0, xentRowKernel<T>,
             static_cast<const T *>(logits), labels, rowLoss.data(), liveRows,
             cols, errors);
    launch(1, kFinalThreads, 0, xentTotalKernel, (const double *)rowLoss.data(),
           liveRows, divisor, loss);
  });
}

void softmaxXentGrad(int32_t dtype, const void *logits, const int32_t *labels,
                     const float *dloss, void *dlogits, int64_t rows,
                     int64_t cols, float divisor, DeviceError *errors) {
  using namespace xent;
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0)
      return;
    launch(rowBlocks(rows), kRowThreads, 0, xentGradKernel<T>,
           static_cast<const T *>(logits), labels, dloss,
           static_cast<T *>(dlogits), rows, cols, divisor, errors);
  });
}

//===--- embedding.cu -----------------------------------------------------===//

void embedding(int32_t dtype, const int32_t *ids, const void *table, void *out,
               int64_t n, int64_t vocab, int64_t dim, DeviceError *errors) {
  using namespace embeddings;
  const int64_t rowBytes =
      std::max<int64_t>(dim, 0) * (dtype == ZRT_BF16 ? 2 : 4);
  if (n <= 0)
    return;
  auto gather = [&](auto unit) {
    using U = decltype(unit);
    launch(rowBlocks(n), kGatherThreads, 0, embeddingKernel<U>, ids,
           static_cast<const U *>(table), static_cast<U *>(out), n, vocab,
           rowBytes / (int64_t)sizeof(U), errors);
  };
  const bool aligned16 = isAligned16(table) && isAligned16(out);
  const bool aligned4 = reinterpret_cast<uintptr_t>(table) % 4 == 0 &&
                        reinterpret_cast<uintptr_t>(out) % 4 == 0;
  if (rowBytes % 16 == 0 && aligned16)
    gather(uint4{});
  else if (rowBytes % 4 == 0 && aligned4)
    gather(uint32_t{});
  else
    gather(uint16_t{});
}

void embeddingGrad(int32_t dtype, const int32_t *ids, const void *dout,
                   void *dtable, int64_t n, int64_t vocab, int64_t dim,
                   DeviceError *errors) {
  using namespace embeddings;
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t tableElems =
        std::max<int64_t>(vocab, 0) * std::max<int64_t>(dim, 0);
    if (tableElems > 0)
      std::memset(dtable, 0, tableElems * sizeof(T));
    if (n <= 0)
      return;
    const uint32_t sentinel =
        (uint32_t)std::clamp<int64_t>(vocab, 0, int64_t(1) << 31);
    std::vector<uint32_t> keys = scratch<uint32_t>(n);
    std::vector<int64_t> positions = scratch<int64_t>(n);
    launch(gridFor(n), kThreads, 0, sortKeysKernel, ids, keys.data(),
           positions.data(), n, vocab, sentinel, errors);
    if (dim <= 0)
      return;
    // CUB's radix sort of (key, position) pairs, which is stable.
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
    std::vector<uint32_t> keysOut(n);
    std::vector<int64_t> posOut(n);
    for (int64_t i = 0; i < n; ++i) {
      keysOut[i] = keys[order[i]];
      posOut[i] = positions[order[i]];
    }
    launch(rowBlocks(n), kThreads, 0, accumulateRunsKernel<T>,
           (const uint32_t *)keysOut.data(), (const int64_t *)posOut.data(),
           static_cast<const T *>(dout), static_cast<T *>(dtable), n, dim,
           sentinel);
  });
}

//===--- norms.cu ---------------------------------------------------------===//

namespace {

template <typename Norm, typename T>
void normGrad(const T *x, const T *gamma, const T *dy, T *dx,
              ColumnOutputs<T, Norm::kParams> params, int64_t rows,
              int64_t cols, float eps) {
  using namespace norms;
  using Value = typename Norm::Value;
  if (cols <= 0)
    return;
  const int64_t liveRows = std::max<int64_t>(rows, 0);
  std::vector<Value> stats = scratch<Value>(liveRows);
  if (liveRows > 0)
    launch(warpRowBlocks(liveRows), kThreads, 0, rowStatsKernel<Norm, T>, x,
           stats.data(), liveRows, cols, eps);
  reduceColumns<T, Norm::kParams>(
      typename Norm::template ParamGrads<T>{x, dy, stats.data(), cols},
      liveRows, cols, params);
  if (liveRows > 0)
    launch(warpRowBlocks(liveRows), kThreads, 0, rowDxKernel<Norm, T>, x, gamma,
           dy, (const Value *)stats.data(), dx, liveRows, cols);
}

} // namespace

void layerNorm(int32_t dtype, const void *x, const void *gamma,
               const void *beta, void *y, int64_t rows, int64_t cols,
               float eps) {
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0 || cols <= 0)
      return;
    launch(norms::warpRowBlocks(rows), kThreads, 0, norms::layerNormKernel<T>,
           static_cast<const T *>(x), static_cast<const T *>(gamma),
           static_cast<const T *>(beta), static_cast<T *>(y), rows, cols, eps);
  });
}

void layerNormGrad(int32_t dtype, const void *x, const void *gamma,
                   const void *dy, void *dx, void *dgamma, void *dbeta,
                   int64_t rows, int64_t cols, float eps) {
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    normGrad<norms::LayerNormRows>(
        static_cast<const T *>(x), static_cast<const T *>(gamma),
        static_cast<const T *>(dy), static_cast<T *>(dx),
        ColumnOutputs<T, 2>{
            {static_cast<T *>(dgamma), static_cast<T *>(dbeta)}},
        rows, cols, eps);
  });
}

void rmsNorm(int32_t dtype, const void *x, const void *gamma, void *y,
             int64_t rows, int64_t cols, float eps) {
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows <= 0 || cols <= 0)
      return;
    launch(norms::warpRowBlocks(rows), kThreads, 0, norms::rmsNormKernel<T>,
           static_cast<const T *>(x), static_cast<const T *>(gamma),
           static_cast<T *>(y), rows, cols, eps);
  });
}

void rmsNormGrad(int32_t dtype, const void *x, const void *gamma,
                 const void *dy, void *dx, void *dgamma, int64_t rows,
                 int64_t cols, float eps) {
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    normGrad<norms::RmsNormRows>(
        static_cast<const T *>(x), static_cast<const T *>(gamma),
        static_cast<const T *>(dy), static_cast<T *>(dx),
        ColumnOutputs<T, 1>{{static_cast<T *>(dgamma)}}, rows, cols, eps);
  });
}

//===--- rope.cu ----------------------------------------------------------===//

void rope(int32_t dtype, const void *x, void *y, int64_t batch, int64_t seq,
          int64_t heads, int64_t headDim, float theta, int32_t inverse) {
  using namespace rotary;
  const int64_t half = headDim / 2;
  if (headDim % 2 != 0 || batch <= 0 || seq <= 0 || heads <= 0 || half <= 0)
    return;
  const InvFreq invFreq = hostInvFreq(headDim, theta);
  const int64_t rows = batch * seq;
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    launch(gridFor(rows * half), kThreads, 0, ropeKernel<T>,
           static_cast<const T *>(x), static_cast<T *>(y), rows, seq, heads,
           headDim, theta, inverse != 0, invFreq.useTable, invFreq.table);
  });
}

//===--- attention.cu (SIMT) ----------------------------------------------===//

namespace {

unsigned gridSize(int64_t tiles, int64_t batch, int64_t heads) {
  return (unsigned)(tiles * batch * heads);
}

template <int Dp, typename T, bool Stats>
void launchForward(const simt::Shape &s, const void *q, const void *k,
                   const void *v, void *out, const void *dout, float *lse,
                   float *delta) {
  using namespace simt;
  constexpr int Br = kWarps * rowsPerWarp<Dp>();
  launch(gridSize((s.seq + Br - 1) / Br, s.batch, s.heads), simt::kThreads,
         forwardSmemFloats<Dp>() * sizeof(float),
         attentionForwardKernel<Dp, T, Stats>, s, static_cast<const T *>(q),
         static_cast<const T *>(k), static_cast<const T *>(v),
         static_cast<T *>(out), static_cast<const T *>(dout), lse, delta);
}

template <int Dp, typename T>
void launchBackward(const simt::Shape &s, const void *q, const void *k,
                    const void *v, const void *dout, void *dq, void *dk,
                    void *dv, float *lse, float *delta) {
  using namespace simt;
  launchForward<Dp, T, true>(s, q, k, v, nullptr, dout, lse, delta);
  constexpr int Bk = kWarps * keysPerWarp<Dp>();
  launch(gridSize((s.seq + Bk - 1) / Bk, s.batch, s.kvHeads), simt::kThreads,
         dkdvSmemFloats<Dp>() * sizeof(float), attentionDkDvKernel<Dp, T>, s,
         static_cast<const T *>(q), static_cast<const T *>(k),
         static_cast<const T *>(v), static_cast<const T *>(dout),
         (const float *)lse, (const float *)delta, static_cast<T *>(dk),
         static_cast<T *>(dv));
  constexpr int Br = kWarps * rowsPerWarp<Dp>();
  launch(gridSize((s.seq + Br - 1) / Br, s.batch, s.heads), simt::kThreads,
         dqSmemFloats<Dp>() * sizeof(float), attentionDqKernel<Dp, T>, s,
         static_cast<const T *>(q), static_cast<const T *>(k),
         static_cast<const T *>(v), static_cast<const T *>(dout),
         (const float *)lse, (const float *)delta, static_cast<T *>(dq));
}

} // namespace

void attention(int32_t dtype, const void *q, const void *k, const void *v,
               void *out, int64_t batch, int64_t seq, int64_t heads,
               int64_t kvHeads, int64_t headDim) {
  const simt::Shape s = simt::shapeOf(batch, seq, heads, kvHeads, headDim);
  if (batch == 0 || seq == 0)
    return;
  simt::dispatch(dtype, headDim, [&](auto width, auto tag) {
    launchForward<decltype(width)::value, decltype(tag), false>(
        s, q, k, v, out, nullptr, nullptr, nullptr);
  });
}

void attentionGrad(int32_t dtype, const void *q, const void *k, const void *v,
                   const void *dout, void *dq, void *dk, void *dv,
                   int64_t batch, int64_t seq, int64_t heads, int64_t kvHeads,
                   int64_t headDim) {
  const simt::Shape s = simt::shapeOf(batch, seq, heads, kvHeads, headDim);
  if (batch == 0 || seq == 0)
    return;
  const size_t rows = (size_t)batch * (size_t)heads * (size_t)seq;
  std::vector<float> stats = scratch<float>(2 * rows);
  float *lse = stats.data(), *delta = stats.data() + rows;
  simt::dispatch(dtype, headDim, [&](auto width, auto tag) {
    launchBackward<decltype(width)::value, decltype(tag)>(s, q, k, v, dout, dq,
                                                          dk, dv, lse, delta);
  });
}

//===--- optimizer.cu -----------------------------------------------------===//

void sumSquares(int32_t dtype, const void *x, float *out, int64_t n) {
  using namespace optim;
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0) {
      out[0] = 0.0f;
      return;
    }
    constexpr int kSize = Pack<T>::kSize;
    const int64_t packs = isAligned16(x) ? n / kSize : 0;
    const int64_t blocks = sumSquaresBlocks<T>(n);
    std::vector<double> partials = scratch<double>(blocks);
    launch((unsigned)blocks, kSumThreads, 0, sumSquaresPartialKernel<T>,
           static_cast<const T *>(x), n, packs, partials.data());
    launch(1, kFinalThreads, 0, sumSquaresFinalKernel,
           (const double *)partials.data(), blocks, out);
  });
}

void clipCoefficient(const float *totalSq, const float *maxNorm, float *coef) {
  launch(1, 1, 0, optim::clipCoefficientKernel, totalSq, maxNorm, coef);
}

void adamw(int32_t gradDtype, const float *p, const void *g, const float *m,
           const float *v, float *pOut, float *mOut, float *vOut, int64_t n,
           const float *lr, const float *step, const float *gradScale,
           float beta1, float beta2, float eps, float weightDecay) {
  byDtype(gradDtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0)
      return;
    launch(gridFor(n), kThreads, 0, optim::adamwKernel<T>, p,
           static_cast<const T *>(g), m, v, pOut, mOut, vOut, n, lr, step,
           gradScale, beta1, beta2, eps, weightDecay);
  });
}

//===--- memory_ops.cu ----------------------------------------------------===//

void fill(int32_t dtype, void *dst, int64_t n, float value) {
  byDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0)
      return;
    if (value == 0.0f && !std::signbit(value)) {
      std::memset(dst, 0, n * sizeof(T)); // cudaMemsetAsync
      return;
    }
    launch(gridFor(n), kThreads, 0, memory::fillKernel<T>,
           static_cast<T *>(dst), n, value);
  });
}

} // namespace zrt::cuda::emulated
