//===- attention_tc.h - bf16 tensor-core attention, host side ---*- C++ -*-===//
//
// What attention.cu's entry points call when a call goes to the tensor-core
// kernels (attention_tc_kernels.cuh): the same arguments as zrt_attention /
// zrt_attention_grad after attention.cu's checks, device pointers, work
// enqueued on `stream`. Internal to the CUDA backend.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_ATTENTION_TC_H
#define ZRT_CUDA_ATTENTION_TC_H

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace zrt::cuda {

/// Whether the tensor-core kernels exist for this call: bf16, head_dim 64 or
/// 128, and every tensor 16-byte aligned (the kernels load 16 bytes at a
/// time; a pointer into the middle of a buffer may not be).
bool tensorCoreAttentionFits(int32_t dtype, int64_t headDim,
                             const void *const *tensors, int count);

/// out = softmax(q k^T / sqrt(head_dim), causal) v, bf16.
void attentionTensorCores(const char *kernel, cudaStream_t stream,
                          const void *q, const void *k, const void *v,
                          void *out, int64_t batch, int64_t seq, int64_t heads,
                          int64_t kvHeads, int64_t headDim);

/// dq, dk, dv of attentionTensorCores; `scratch` holds 2 batch heads seq
/// floats (two per query row), used only by the kernels enqueued here.
void attentionGradTensorCores(const char *kernel, cudaStream_t stream,
                              const void *q, const void *k, const void *v,
                              const void *dout, void *dq, void *dk, void *dv,
                              int64_t batch, int64_t seq, int64_t heads,
                              int64_t kvHeads, int64_t headDim, float *scratch);

} // namespace zrt::cuda

#endif // ZRT_CUDA_ATTENTION_TC_H
