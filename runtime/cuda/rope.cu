//===- rope.cu - Rotary position embedding (and its inverse) --------------===//
//
// Hugging Face Llama's rotate_half convention, as the CPU backend: within
// each head, element i pairs with i + head_dim/2 and the pair turns by
// pos * inv_freq[i], pos = row % seq; `inverse` turns by the negative angle
// (the gradient, rotation being orthogonal).
//
// One thread per (row, i): it forms the angle and its sine and cosine once
// and rotates that pair in every head of the row; consecutive threads touch
// consecutive elements of each head, so accesses coalesce. The thread reads
// both elements of a pair before writing either, so y may be x.
//
// inv_freq is the compiler's host table (nn.rope's base and scaling, in
// transformers' float32 order), passed by value in the kernel's parameters
// kMaxPairs frequencies at a time: no device copy, and the angle is the same
// float32 product as on the CPU; only sinf/cosf differ, by an ulp or two.
// Heads wider than 2 * kMaxPairs (never in practice) take several launches,
// each rotating its own pairs.
//
// The kernels are in rope_kernels.cuh, which the host emulator of
// tests/emulation compiles too (zrt-cuda-kernels-emulated); this file holds
// their launches.
//
//===----------------------------------------------------------------------===//

#include "cuda/launch_utils.cuh"
#include "cuda/rope_kernels.cuh"

#include <algorithm>

namespace zrt::cuda {

using namespace rotary;

void rope(zrt_context *ctx, int32_t dtype, const void *x, void *y,
          int64_t batch, int64_t seq, int64_t heads, int64_t headDim,
          const float *invFreq, int32_t inverse) {
  floatDtypeSize("zrt_rope", dtype);
  if (headDim % 2 != 0)
    fatal("zrt_rope: head_dim %lld is odd; rotation needs pairs",
          (long long)headDim);
  const int64_t half = headDim / 2;
  if (batch <= 0 || seq <= 0 || heads <= 0 || half <= 0)
    return;
  const int64_t rows = batch * seq;
  for (int64_t first = 0; first < half; first += kMaxPairs) {
    InvFreqChunk chunk;
    chunk.first = first;
    chunk.count = std::min<int64_t>(kMaxPairs, half - first);
    std::copy(invFreq + first, invFreq + first + chunk.count, chunk.v);
    dispatchDtype("zrt_rope", dtype, [&](auto tag) {
      using T = decltype(tag);
      launchKernel(ropeKernel<T>, gridFor(rows * chunk.count), kThreads, 0,
                   computeStream(ctx), static_cast<const T *>(x),
                   static_cast<T *>(y), rows, seq, heads, headDim,
                   inverse != 0, chunk);
      ZRT_CUDA_CHECK_LAUNCH("zrt_rope");
    });
  }
}

} // namespace zrt::cuda
