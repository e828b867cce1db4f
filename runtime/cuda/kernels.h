//===- kernels.h - The CUDA backend's kernels -------------------*- C++ -*-===//
//
// One function per zrt.h kernel, with the same arguments and the same
// contract (read the comment of the zrt_* function of the same name), except
// that:
//  - every tensor pointer is a device pointer (cudaMalloc'd by zrt_alloc on
//    a CUDA context), and so are the float32 scalars passed by pointer
//    (loss, dloss, lr, step, grad_scale, total_sq, max_norm, coef, out);
//  - kernels are asynchronous: they enqueue work on computeStream(ctx) and
//    return; the host never reads a result without synchronising;
//  - shape and dtype errors are reported with zrt::fatal() before anything is
//    launched (as the CPU kernels do); errors only the data can show (a label
//    or token id out of range) are recorded with reportDeviceError() from the
//    kernel and turned into a fatal message naming the kernel, the row and
//    the value when the runtime next synchronises (checkDeviceErrors()).
//
// bf16 tensors are __nv_bfloat16 in memory (the same bits as the CPU
// backend's bf16: the upper half of an IEEE float32, round to nearest even);
// every kernel computes and accumulates in float32 whatever the storage type,
// so a kernel's output matches the CPU backend's within float32 rounding of
// the reduction order (bf16 outputs within one bf16 ulp).
//
// Files: matmul.cu (cuBLASLt), attention.cu (fused causal attention, forward
// and backward), one .cu per remaining kernel family (elementwise.cu,
// norms.cu, embedding.cu, softmax_xent.cu, rope.cu, optimizer.cu,
// memory_ops.cu); the context's CUDA state lives in device_context.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_KERNELS_H
#define ZRT_CUDA_KERNELS_H

#include "core/device.h"
#include "cuda/device_error.cuh"
#include "zero/zrt.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace zrt::cuda {

/// Every kernel below as the DeviceKernels table ZRT_ON_DEVICE dispatches
/// to (kernels_table.cpp): a GPU context's, and the emulated device's.
const DeviceKernels &cudaKernels();

//===--- What the kernels need from the context (device_context.cpp) ------===//

/// The stream every kernel of `ctx` runs on.
cudaStream_t computeStream(zrt_context *ctx);

/// The cuBLASLt handle and the GEMM workspace of `ctx` (allocated once, at
/// kGemmWorkspaceBytes, and charged to the ledger as communication-free
/// runtime workspace, named separately from the compiler's categories).
struct GemmResources {
  cublasLtHandle_t handle;
  void *workspace;
  size_t workspaceBytes;
};
GemmResources gemmResources(zrt_context *ctx);
constexpr size_t kGemmWorkspaceBytes = ZRT_CUDA_GEMM_WORKSPACE_BYTES;

/// Counts a kernel's per-call scratch (Scratch in launch_utils.cuh): +bytes
/// when it is allocated, -bytes when it is freed. The most ever live at once
/// is part of the context's runtime workspace (workspaceParts()).
void noteScratch(zrt_context *ctx, int64_t bytes);

/// At least `bytes` of device memory that lives with the context, for what
/// the kernels enqueued by one call hand to each other (the attention
/// backward's row statistics); valid until the next call. Grown, never
/// shrunk; counted in the context's runtime workspace.
void *contextScratch(zrt_context *ctx, size_t bytes);

/// The device address kernels record errors at (see reportDeviceError in
/// device_error.cuh).
DeviceError *deviceErrorSlot(zrt_context *ctx);
/// Copies the slot back (synchronising the compute stream) and, if a kernel
/// recorded an error, stops the job with a message naming it.
void checkDeviceErrors(zrt_context *ctx);

//===--- Kernels (contracts in zrt.h) -------------------------------------===//

// matmul.cu
void matmul(zrt_context *ctx, int32_t dtype, const void *a, const void *b,
            void *c, int64_t m, int64_t n, int64_t k, int32_t transA,
            int32_t transB);
/// The bias (and GELU) in the GEMM's epilogue; GELU's input is cuBLASLt's
/// aux output, whose leading dimension must be a multiple of 8, so with GELU
/// and n % 8 != 0 only the bias is fused and GELU runs as its own kernel.
void matmulBias(zrt_context *ctx, int32_t dtype, const void *a, const void *b,
                const void *bias, void *c, void *preActivation, int64_t m,
                int64_t n, int64_t k, int32_t transA, int32_t transB,
                int32_t epilogue);

// elementwise.cu
void biasAdd(zrt_context *ctx, int32_t dtype, const void *x, const void *bias,
             void *y, int64_t rows, int64_t cols);
void sumRows(zrt_context *ctx, int32_t dtype, const void *x, void *y,
             int64_t rows, int64_t cols);
void add(zrt_context *ctx, int32_t dtype, const void *a, const void *b, void *y,
         int64_t n);
void relu(zrt_context *ctx, int32_t dtype, const void *x, void *y, int64_t n);
void reluGrad(zrt_context *ctx, int32_t dtype, const void *x, const void *dy,
              void *dx, int64_t n);
void gelu(zrt_context *ctx, int32_t dtype, const void *x, void *y, int64_t n);
void geluGrad(zrt_context *ctx, int32_t dtype, const void *x, const void *dy,
              void *dx, int64_t n);
void swiglu(zrt_context *ctx, int32_t dtype, const void *gate, const void *up,
            void *y, int64_t n);
void swigluGrad(zrt_context *ctx, int32_t dtype, const void *gate,
                const void *up, const void *dy, void *dgate, void *dup,
                int64_t n);
void sliceCols(zrt_context *ctx, int32_t dtype, const void *x, void *y,
               int64_t rows, int64_t cols, int64_t offset, int64_t size);
void sliceColsGrad(zrt_context *ctx, int32_t dtype, const void *dy, void *dx,
                   int64_t rows, int64_t cols, int64_t offset, int64_t size);
void cast(zrt_context *ctx, int32_t srcDtype, int32_t dstDtype, const void *src,
          void *dst, int64_t n);

// softmax_xent.cu
void softmaxXent(zrt_context *ctx, int32_t dtype, const void *logits,
                 const int32_t *labels, float *loss, int64_t rows, int64_t cols,
                 float divisor);
void softmaxXentGrad(zrt_context *ctx, int32_t dtype, const void *logits,
                     const int32_t *labels, const float *dloss, void *dlogits,
                     int64_t rows, int64_t cols, float divisor);

// embedding.cu
void embedding(zrt_context *ctx, int32_t dtype, const int32_t *ids,
               const void *table, void *out, int64_t n, int64_t vocab,
               int64_t dim);
void embeddingGrad(zrt_context *ctx, int32_t dtype, const int32_t *ids,
                   const void *dout, void *dtable, int64_t n, int64_t vocab,
                   int64_t dim);

// norms.cu
void layerNorm(zrt_context *ctx, int32_t dtype, const void *x,
               const void *gamma, const void *beta, void *y, int64_t rows,
               int64_t cols, float eps);
void layerNormGrad(zrt_context *ctx, int32_t dtype, const void *x,
                   const void *gamma, const void *dy, void *dx, void *dgamma,
                   void *dbeta, int64_t rows, int64_t cols, float eps);
void rmsNorm(zrt_context *ctx, int32_t dtype, const void *x, const void *gamma,
             void *y, int64_t rows, int64_t cols, float eps);
void rmsNormGrad(zrt_context *ctx, int32_t dtype, const void *x,
                 const void *gamma, const void *dy, void *dx, void *dgamma,
                 int64_t rows, int64_t cols, float eps);

// rope.cu
void rope(zrt_context *ctx, int32_t dtype, const void *x, void *y,
          int64_t batch, int64_t seq, int64_t heads, int64_t headDim,
          const float *invFreq, int32_t inverse);

// attention.cu
void attention(zrt_context *ctx, int32_t dtype, const void *q, const void *k,
               const void *v, void *out, int64_t batch, int64_t seq,
               int64_t heads, int64_t kvHeads, int64_t headDim);
void attentionGrad(zrt_context *ctx, int32_t dtype, const void *q,
                   const void *k, const void *v, const void *dout, void *dq,
                   void *dk, void *dv, int64_t batch, int64_t seq,
                   int64_t heads, int64_t kvHeads, int64_t headDim);

// optimizer.cu
void sumSquares(zrt_context *ctx, int32_t dtype, const void *x, float *out,
                int64_t n);
void clipCoefficient(zrt_context *ctx, const float *totalSq,
                     const float *maxNorm, float *coef);
void adamw(zrt_context *ctx, int32_t gradDtype, const float *p, const void *g,
           const float *m, const float *v, float *pOut, float *mOut,
           float *vOut, int64_t n, const float *lr, const float *step,
           const float *gradScale, float beta1, float beta2, float eps,
           float weightDecay);

// memory_ops.cu
void copy(zrt_context *ctx, const void *src, void *dst, int64_t bytes);
void fill(zrt_context *ctx, int32_t dtype, void *dst, int64_t n, float value);
void shardSlice(zrt_context *ctx, int32_t dtype, const void *full, void *shard,
                int64_t numel, int64_t shardNumel);

} // namespace zrt::cuda

#endif // ZRT_CUDA_KERNELS_H
