//===- kernels.h - The CUDA backend's kernels -------------------*- C++ -*-===//
//
// One function per kernel of the catalogue (zero/zrt_kernels.def), declared
// from its line, with the same arguments and the same contract (read the
// comment above that line), except that:
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

/// Every kernel below as the DeviceKernels table the zrt_* entry points call
/// (kernels_table.cpp): a GPU context's, and the emulated device's.
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

//===--- Kernels (contracts in zero/zrt_kernels.def) ----------------------===//

// One per catalogue line, with the zrt_* function's parameters: matmul.cu,
// attention.cu, and one .cu per remaining family define them.
#define ZRT_KERNEL(name, backendName, params, args) void backendName params;
#include "zero/zrt_kernels.def"
#undef ZRT_KERNEL

} // namespace zrt::cuda

#endif // ZRT_CUDA_KERNELS_H
