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
// inv_freq is computed on the host with the CPU backend's very expression
// and passed by value in the kernel's parameters: a device powf may differ
// from the host's by an ulp, and at positions in the thousands an ulp of
// inv_freq is a visible change of angle. The angle itself is the same
// float32 product as on the CPU; only sinf/cosf differ, by an ulp or two.
// Heads wider than 2 * kMaxHalf (never in practice) compute inv_freq on the
// device instead.
//
// The kernels are in rope_kernels.cuh, which the host emulator of
// tests/emulation compiles too (zrt-cuda-kernels-emulated); this file holds
// their launches.
//
//===----------------------------------------------------------------------===//

#include "cuda/launch_utils.cuh"
#include "cuda/rope_kernels.cuh"

#include <cmath>

namespace zrt::cuda {

using namespace rotary;

void rope(zrt_context *ctx, int32_t dtype, const void *x, void *y,
          int64_t batch, int64_t seq, int64_t heads, int64_t headDim,
          float theta, int32_t inverse) {
  dtypeSize("zrt_rope", dtype);
  if (headDim % 2 != 0)
    fatal("zrt_rope: head_dim %lld is odd; rotation needs pairs",
          (long long)headDim);
  const int64_t half = headDim / 2;
  if (batch <= 0 || seq <= 0 || heads <= 0 || half <= 0)
    return;
  const InvFreq invFreq = hostInvFreq(headDim, theta);
  const int64_t rows = batch * seq;
  dispatchDtype("zrt_rope", dtype, [&](auto tag) {
    using T = decltype(tag);
    launchKernel(ropeKernel<T>, gridFor(rows * half), kThreads, 0,
                 computeStream(ctx), static_cast<const T *>(x),
                 static_cast<T *>(y), rows, seq, heads, headDim, theta,
                 inverse != 0, invFreq.useTable, invFreq.table);
    ZRT_CUDA_CHECK_LAUNCH("zrt_rope");
  });
}

} // namespace zrt::cuda
