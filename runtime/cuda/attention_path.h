//===- attention_path.h - Which kernels run bf16 attention ------*- C++ -*-===//
//
// The CUDA backend runs zrt_attention / zrt_attention_grad on one of two
// kernel families (attention.cu): bf16 tensors with head_dim 64 or 128 on
// the tensor cores (attention_tc.cu), everything else on the float32 SIMT
// kernels. ZRT_CUDA_ATTENTION chooses, read once on first use: unset, empty
// or "tc" for that default, "simt" for the SIMT kernels everywhere; any
// other value stops the job.
//
// Free of CUDA types, so that the GPU tests (which use no CUDA headers) can
// run both paths in one process.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_ATTENTION_PATH_H
#define ZRT_CUDA_ATTENTION_PATH_H

#include "cuda/backend.h" // ZRT_CUDA_API

namespace zrt::cuda {

enum class AttentionPath {
  TensorCores, // bf16 at head_dim 64 or 128 on the tensor cores, else SIMT
  Simt         // the SIMT kernels for every call
};

/// The current choice (ZRT_CUDA_ATTENTION unless overridden).
ZRT_CUDA_API AttentionPath attentionPath();

/// Overrides ZRT_CUDA_ATTENTION for the calls that follow (tests).
ZRT_CUDA_API void setAttentionPath(AttentionPath path);

} // namespace zrt::cuda

#endif // ZRT_CUDA_ATTENTION_PATH_H
