//===- attention.cu - Fused causal attention, forward and backward --------===//
//
// FlashAttention-2 style: no T x T matrix ever exists, in global or in
// shared memory. Two kernel families, chosen per call (attention_path.h):
//  - bf16 tensors with head_dim 64 or 128 (GPT-2, Llama) run on the tensor
//    cores (attention_tc.cu, attention_tc_kernels.cuh): bf16 products with
//    float32 accumulation, the softmax statistics in float32, P (and in the
//    backward dS) rounded to bf16 before the products that consume them, as
//    FlashAttention does. bf16 storage already rounds q, k, v and the
//    outputs to 8 significant bits; the extra roundings of P and dS (2^-9
//    relative) stay within the bf16 tolerance the checks hold the backend to
//    (tests/cuda_kernel_tests.cpp, tests/emulation).
//  - everything else, every float32 call included, runs on the SIMT kernels
//    of this file: float32 arithmetic on CUDA cores, bf16 widened when a
//    tile is loaded into shared memory and rounded once when a result is
//    stored. float32 calls stay off the tensor cores because the CPU
//    backend's contract is float32 math, which bf16 or TF32 scores would
//    break. ZRT_CUDA_ATTENTION=simt sends bf16 calls here too.
//
// The rest of this comment describes the SIMT kernels; the tensor-core ones
// follow the same plan (the same three backward kernels, the same grid
// orders) with warps of 16 rows and mma fragments.
//
// Head dimensions: a kernel is compiled for a padded width Dp of 32, 64 or
// 128 and every head_dim in 1..128 runs on the smallest Dp >= head_dim, the
// columns beyond head_dim zero-filled in shared memory (they add nothing to
// a dot product, and are never stored). head_dim > 128 is fatal.
//
// Forward (attentionForwardKernel): one block of 8 warps per (batch, head,
// tile of Br query rows). The Q tile stays in shared memory; the block walks
// the key/value tiles of 64 keys up to the diagonal. Each warp owns R query
// rows (Br = 8 R), each lane two keys of the tile (lane, lane + 32) for the
// scores and Dp/32 output columns (lane + 32 c) for the accumulator, so a
// row's max and sum are warp shuffles and the online softmax (running max m,
// running sum l, accumulator rescaled by exp(m_old - m_new)) lives in
// registers. Padded shared-memory rows (Dp + 1 floats) keep the lane-strided
// reads conflict-free; the broadcast reads are float4.
//
// Backward: the ABI hands the backward q, k, v and dout only (no output, no
// logsumexp), so it runs three kernels:
//  1. the forward kernel again, in "stats" mode: instead of storing O it
//     stores, per query row, L = m + log(l) and D = dO . O (= sum_j P_ij
//     dO_i . v_j, the rowsum(P * dP) of the softmax gradient), both float32,
//     into the context's kernel scratch (8 bytes a query row; a buffer
//     reused across calls and grown to the largest call, so that the memory
//     report's runtime workspace counts it: contextScratch in kernels.h);
//  2. attentionDkDvKernel: one block per (batch, kv head, tile of keys),
//     looping over every query head of the GQA group and every query chunk
//     at or after the tile's first key, recomputing P = exp(s - L) and
//     dS = P (dO . v - D), accumulating dV += P^T dO and dK += dS^T Q in
//     registers. Each dk/dv element is owned by one thread of one block and
//     summed in a fixed order: deterministic, no atomics;
//  3. attentionDqKernel: one block per (batch, head, query tile), looping
//     over the key tiles up to the diagonal: dQ = scale dS K, also owned.
// The scores are recomputed twice more than FlashAttention-2's single
// backward pass, the price of deterministic dk/dv without atomics and of the
// missing saved statistics; all three kernels are O(T^2 d) work and O(T d)
// memory.
//
// Work balance under the causal mask: tiles far from the start of the
// sequence carry the most work, so the forward and dq grids issue the last
// query tiles first and the dk/dv grid the first key tiles first.
//
// The SIMT kernels are in attention_kernels.cuh, which the host emulator of
// tests/emulation compiles too (zrt-cuda-kernels-emulated); this file holds
// their launches.
//
//===----------------------------------------------------------------------===//

#include "cuda/attention_kernels.cuh"
#include "cuda/attention_path.h"
#include "cuda/attention_tc.h"
#include "cuda/cuda_check.h"
#include "cuda/kernels.h"
#include "cuda/launch.cuh"
#include "cuda/shared_memory.cuh"

#include <cuda_bf16.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <type_traits>

using namespace zrt;
using namespace zrt::cuda;
using namespace zrt::cuda::simt;

namespace {

//===--- Host side --------------------------------------------------------===//

Shape makeShape(const char *kernel, int32_t dtype, int64_t batch, int64_t seq,
                int64_t heads, int64_t kvHeads, int64_t headDim) {
  if (dtype != ZRT_F32 && dtype != ZRT_BF16)
    fatal("%s: unsupported dtype %d", kernel, (int)dtype);
  if (batch < 0 || seq < 0 || heads <= 0 || kvHeads <= 0 || headDim <= 0 ||
      heads % kvHeads != 0)
    fatal("%s: invalid shape batch=%lld seq=%lld heads=%lld kv_heads=%lld "
          "head_dim=%lld (heads must be a multiple of kv_heads)",
          kernel, (long long)batch, (long long)seq, (long long)heads,
          (long long)kvHeads, (long long)headDim);
  if (headDim > 128)
    fatal("%s: head_dim=%lld is not supported by the CUDA backend (at most "
          "128)",
          kernel, (long long)headDim);
  return shapeOf(batch, seq, heads, kvHeads, headDim);
}

/// The 1-D grid of `tiles` blocks per (batch, head); fatal beyond CUDA's
/// limit of 2^31 - 1 blocks.
unsigned gridSize(const char *kernel, int64_t tiles, int64_t batch,
                  int64_t heads) {
  if (tiles > INT_MAX / batch / heads)
    fatal("%s: %lld tiles x batch=%lld x heads=%lld exceed CUDA's grid limit",
          kernel, (long long)tiles, (long long)batch, (long long)heads);
  return (unsigned)(tiles * batch * heads);
}

template <int Dp, typename T, bool Stats>
void launchForward(const char *kernel, cudaStream_t stream, const Shape &s,
                   const void *q, const void *k, const void *v, void *out,
                   const void *dout, float *lse, float *delta) {
  constexpr int Br = kWarps * rowsPerWarp<Dp>();
  unsigned grid = gridSize(kernel, (s.seq + Br - 1) / Br, s.batch, s.heads);
  size_t smem = forwardSmemFloats<Dp>() * sizeof(float);
  auto fn = attentionForwardKernel<Dp, T, Stats>;
  allowDynamicSharedMemory(fn, smem);
  launchKernel(fn, grid, simt::kThreads, smem, stream, s,
               static_cast<const T *>(q), static_cast<const T *>(k),
               static_cast<const T *>(v), static_cast<T *>(out),
               static_cast<const T *>(dout), lse, delta);
  ZRT_CUDA_CHECK_LAUNCH(kernel);
}

template <int Dp, typename T>
void launchBackward(const char *kernel, cudaStream_t stream, const Shape &s,
                    const void *q, const void *k, const void *v,
                    const void *dout, void *dq, void *dk, void *dv, float *lse,
                    float *delta) {
  launchForward<Dp, T, true>(kernel, stream, s, q, k, v, nullptr, dout, lse,
                             delta);

  constexpr int Bk = kWarps * keysPerWarp<Dp>();
  unsigned dkdvGrid =
      gridSize(kernel, (s.seq + Bk - 1) / Bk, s.batch, s.kvHeads);
  size_t dkdvSmem = dkdvSmemFloats<Dp>() * sizeof(float);
  auto dkdvFn = attentionDkDvKernel<Dp, T>;
  allowDynamicSharedMemory(dkdvFn, dkdvSmem);
  launchKernel(dkdvFn, dkdvGrid, simt::kThreads, dkdvSmem, stream, s,
               static_cast<const T *>(q), static_cast<const T *>(k),
               static_cast<const T *>(v), static_cast<const T *>(dout), lse,
               delta, static_cast<T *>(dk), static_cast<T *>(dv));
  ZRT_CUDA_CHECK_LAUNCH(kernel);

  constexpr int Br = kWarps * rowsPerWarp<Dp>();
  unsigned dqGrid = gridSize(kernel, (s.seq + Br - 1) / Br, s.batch, s.heads);
  size_t dqSmem = dqSmemFloats<Dp>() * sizeof(float);
  auto dqFn = attentionDqKernel<Dp, T>;
  allowDynamicSharedMemory(dqFn, dqSmem);
  launchKernel(dqFn, dqGrid, simt::kThreads, dqSmem, stream, s,
               static_cast<const T *>(q), static_cast<const T *>(k),
               static_cast<const T *>(v), static_cast<const T *>(dout), lse,
               delta, static_cast<T *>(dq));
  ZRT_CUDA_CHECK_LAUNCH(kernel);
}

/// ZRT_CUDA_ATTENTION, read on first use: unset, empty or tc (tensor cores
/// where they fit) or simt.
AttentionPath readAttentionPath() {
  const char *env = std::getenv("ZRT_CUDA_ATTENTION");
  if (!env || !*env || std::strcmp(env, "tc") == 0)
    return AttentionPath::TensorCores;
  if (std::strcmp(env, "simt") == 0)
    return AttentionPath::Simt;
  fatal("ZRT_CUDA_ATTENTION=%s: expected tc or simt", env);
}

AttentionPath &attentionPathSetting() {
  static AttentionPath path = readAttentionPath();
  return path;
}

/// Whether this call runs on the tensor-core kernels.
bool useTensorCores(int32_t dtype, int64_t headDim,
                    std::initializer_list<const void *> tensors) {
  return attentionPathSetting() == AttentionPath::TensorCores &&
         tensorCoreAttentionFits(dtype, headDim, tensors.begin(),
                                 (int)tensors.size());
}

} // namespace

void zrt::cuda::attention(zrt_context *ctx, int32_t dtype, const void *q,
                          const void *k, const void *v, void *out,
                          int64_t batch, int64_t seq, int64_t heads,
                          int64_t kvHeads, int64_t headDim) {
  const char *kernel = "zrt_attention";
  Shape s = makeShape(kernel, dtype, batch, seq, heads, kvHeads, headDim);
  if (batch == 0 || seq == 0)
    return;
  cudaStream_t stream = computeStream(ctx);
  if (useTensorCores(dtype, headDim, {q, k, v, out})) {
    attentionTensorCores(kernel, stream, q, k, v, out, batch, seq, heads,
                         kvHeads, headDim);
    return;
  }
  dispatch(dtype, headDim, [&](auto width, auto tag) {
    launchForward<decltype(width)::value, decltype(tag), false>(
        kernel, stream, s, q, k, v, out, nullptr, nullptr, nullptr);
  });
}

void zrt::cuda::attentionGrad(zrt_context *ctx, int32_t dtype, const void *q,
                              const void *k, const void *v, const void *dout,
                              void *dq, void *dk, void *dv, int64_t batch,
                              int64_t seq, int64_t heads, int64_t kvHeads,
                              int64_t headDim) {
  const char *kernel = "zrt_attention_grad";
  Shape s = makeShape(kernel, dtype, batch, seq, heads, kvHeads, headDim);
  if (batch == 0 || seq == 0)
    return;
  cudaStream_t stream = computeStream(ctx);
  // Per query row: the logsumexp L and D = dO . O, float32, in the
  // context's scratch (read only by the kernels enqueued here; its size is
  // zrt.h's formula, which zero-opt --report predicts).
  const size_t rows = (size_t)batch * (size_t)heads * (size_t)seq;
  float *stats = static_cast<float *>(contextScratch(
      ctx, zrt_cuda_attention_statistics_bytes(batch, heads, seq)));
  if (useTensorCores(dtype, headDim, {q, k, v, dout, dq, dk, dv})) {
    attentionGradTensorCores(kernel, stream, q, k, v, dout, dq, dk, dv, batch,
                             seq, heads, kvHeads, headDim, stats);
    return;
  }
  float *lse = stats, *delta = stats + rows;
  dispatch(dtype, headDim, [&](auto width, auto tag) {
    launchBackward<decltype(width)::value, decltype(tag)>(
        kernel, stream, s, q, k, v, dout, dq, dk, dv, lse, delta);
  });
}

AttentionPath zrt::cuda::attentionPath() { return attentionPathSetting(); }

void zrt::cuda::setAttentionPath(AttentionPath path) {
  attentionPathSetting() = path;
}
