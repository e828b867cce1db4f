//===- attention_tc.cu - bf16 tensor-core attention, launches -------------===//
//
// Host side of the tensor-core attention kernels (attention_tc_kernels.cuh,
// whose comment describes them): grid sizes, the shared-memory opt-in, and
// the backward's three launches. attention.cu decides which calls come here
// (attention_path.h).
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "cuda/attention_tc.h"
#include "cuda/attention_tc_kernels.cuh"
#include "cuda/cuda_check.h"
#include "cuda/launch.cuh"
#include "cuda/shared_memory.cuh"
#include "zero/zrt.h"

#include <climits>

using namespace zrt;
using namespace zrt::cuda;
using namespace zrt::cuda::tc;

namespace {

/// A 1-D grid of `blocks`; fatal beyond CUDA's limit of 2^31 - 1 blocks.
unsigned gridOf(const char *kernel, int64_t blocks) {
  if (blocks > INT_MAX)
    fatal("%s: %lld blocks exceed CUDA's grid limit", kernel,
          (long long)blocks);
  return (unsigned)blocks;
}

const Bf16 *bf16(const void *p) { return static_cast<const Bf16 *>(p); }
Bf16 *bf16(void *p) { return static_cast<Bf16 *>(p); }

template <int D, bool Stats>
void launchForward(const char *kernel, cudaStream_t stream, const Params &p,
                   const void *q, const void *k, const void *v, void *out,
                   const void *dout, float *lse, float *delta) {
  auto fn = forwardKernel<D, Stats>;
  allowDynamicSharedMemory(fn, forwardSmemBytes<D>());
  launchKernel(fn, gridOf(kernel, queryBlocks(p)), kThreads,
               forwardSmemBytes<D>(), stream, p, bf16(q), bf16(k), bf16(v),
               bf16(out), bf16(dout), lse, delta);
  ZRT_CUDA_CHECK_LAUNCH(kernel);
}

template <int D>
void launchBackward(const char *kernel, cudaStream_t stream, const Params &p,
                    const void *q, const void *k, const void *v,
                    const void *dout, void *dq, void *dk, void *dv, float *lse,
                    float *delta) {
  launchForward<D, true>(kernel, stream, p, q, k, v, nullptr, dout, lse, delta);

  auto dkdv = dkdvKernel<D>;
  allowDynamicSharedMemory(dkdv, dkdvSmemBytes<D>());
  launchKernel(dkdv, gridOf(kernel, keyBlocks(p)), kThreads, dkdvSmemBytes<D>(),
               stream, p, bf16(q), bf16(k), bf16(v), bf16(dout), lse, delta,
               bf16(dk), bf16(dv));
  ZRT_CUDA_CHECK_LAUNCH(kernel);

  auto dqFn = dqKernel<D>;
  allowDynamicSharedMemory(dqFn, dqSmemBytes<D>());
  launchKernel(dqFn, gridOf(kernel, queryBlocks(p)), kThreads, dqSmemBytes<D>(),
               stream, p, bf16(q), bf16(k), bf16(v), bf16(dout), lse, delta,
               bf16(dq));
  ZRT_CUDA_CHECK_LAUNCH(kernel);
}

bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

} // namespace

bool zrt::cuda::tensorCoreAttentionFits(int32_t dtype, int64_t headDim,
                                        const void *const *tensors, int count) {
  if (dtype != ZRT_BF16 || (headDim != 64 && headDim != 128))
    return false;
  for (int i = 0; i < count; ++i)
    if (!aligned16(tensors[i]))
      return false;
  return true;
}

void zrt::cuda::attentionTensorCores(const char *kernel, cudaStream_t stream,
                                     const void *q, const void *k,
                                     const void *v, void *out, int64_t batch,
                                     int64_t seq, int64_t heads,
                                     int64_t kvHeads, int64_t headDim) {
  if (headDim == 64)
    launchForward<64, false>(kernel, stream,
                             makeParams(batch, seq, heads, kvHeads, 64), q, k,
                             v, out, nullptr, nullptr, nullptr);
  else
    launchForward<128, false>(kernel, stream,
                              makeParams(batch, seq, heads, kvHeads, 128), q, k,
                              v, out, nullptr, nullptr, nullptr);
}

void zrt::cuda::attentionGradTensorCores(const char *kernel,
                                         cudaStream_t stream, const void *q,
                                         const void *k, const void *v,
                                         const void *dout, void *dq, void *dk,
                                         void *dv, int64_t batch, int64_t seq,
                                         int64_t heads, int64_t kvHeads,
                                         int64_t headDim, float *scratch) {
  // Per query row: L (log2 units) and Delta = dO . O.
  float *lse = scratch;
  float *delta = scratch + (size_t)batch * (size_t)heads * (size_t)seq;
  if (headDim == 64)
    launchBackward<64>(kernel, stream,
                       makeParams(batch, seq, heads, kvHeads, 64), q, k, v,
                       dout, dq, dk, dv, lse, delta);
  else
    launchBackward<128>(kernel, stream,
                        makeParams(batch, seq, heads, kvHeads, 128), q, k, v,
                        dout, dq, dk, dv, lse, delta);
}
