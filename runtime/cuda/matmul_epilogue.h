//===- matmul_epilogue.h - GEMM with a fused bias (+ GELU) ------*- C++ -*-===//
//
// A GEMM whose epilogue adds a bias and optionally applies GELU, in the one
// cuBLASLt call, for a later fusion pass (nn.matmul + nn.bias_add (+ nn.gelu)
// become one kernel). It is not part of the zrt.h ABI yet: the lowering
// never calls it today, so it lives in its own header rather than in
// kernels.h, next to matmul() in matmul.cu, with which it shares the plan
// cache and the operand mapping.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_MATMUL_EPILOGUE_H
#define ZRT_CUDA_MATMUL_EPILOGUE_H

#include "zero/zrt.h"

#include <cstdint>

namespace zrt::cuda {

/// c[m,n] = act(op(a)[m,k] * op(b)[k,n] + bias[n]) with zrt_matmul's operand
/// conventions (a stored k x m when transA, b stored n x k when transB) and
/// dtype (a, b, bias, c and preGelu all of `dtype`; float32 accumulation,
/// the epilogue in float32, one rounding to bf16 at the end).
///
///  - gelu == false: act is the identity (CUBLASLT_EPILOGUE_BIAS); preGelu
///    is ignored.
///  - gelu == true: act is cuBLASLt's GELU, which is the tanh approximation
///    (the same formula as zrt_gelu / GPT-2). When preGelu != nullptr it
///    receives the pre-activation op(a) op(b) + bias ([m,n], row-major), as
///    zrt_gelu_grad needs it (CUBLASLT_EPILOGUE_GELU_AUX_BIAS); cuBLASLt
///    requires that output's leading dimension, n, to be a multiple of 8,
///    so such a call with n % 8 != 0 is fatal. Without preGelu:
///    CUBLASLT_EPILOGUE_GELU_BIAS, any n.
///
/// k must be > 0 (a linear layer without inputs has nothing to fuse); m == 0
/// or n == 0 returns at once. Fatal, naming the shape and dtype, when
/// cuBLASLt offers no algorithm for the combination. Asynchronous on
/// computeStream(ctx), like every kernel.
void matmulBiasGelu(zrt_context *ctx, int32_t dtype, const void *a,
                    const void *b, const void *bias, void *c, void *preGelu,
                    int64_t m, int64_t n, int64_t k, int32_t transA,
                    int32_t transB, bool gelu);

} // namespace zrt::cuda

#endif // ZRT_CUDA_MATMUL_EPILOGUE_H
