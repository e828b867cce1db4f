//===- cuda_check.h - Checked CUDA, cuBLASLt and NCCL calls -----*- C++ -*-===//
//
// One macro per library. A failure stops the job through zrt::fatal() (so
// that the other ranks do not wait forever) with the file, the line, the
// call as written and the library's own error string; fatal() prefixes the
// rank.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_CUDA_CHECK_H
#define ZRT_CUDA_CUDA_CHECK_H

#include "core/check.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#define ZRT_CUDA_CHECK(call)                                                   \
  do {                                                                         \
    cudaError_t zrtCudaStatus_ = (call);                                       \
    if (zrtCudaStatus_ != cudaSuccess)                                         \
      ::zrt::fatal("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, #call,     \
                   cudaGetErrorString(zrtCudaStatus_),                         \
                   cudaGetErrorName(zrtCudaStatus_));                          \
  } while (0)

/// After a kernel launch: reports a bad launch configuration at the launch
/// site rather than at the next synchronisation.
#define ZRT_CUDA_CHECK_LAUNCH(kernelName)                                      \
  ZRT_CUDA_CHECK(cudaGetLastError())

#define ZRT_CUBLAS_CHECK(call)                                                 \
  do {                                                                         \
    cublasStatus_t zrtCublasStatus_ = (call);                                  \
    if (zrtCublasStatus_ != CUBLAS_STATUS_SUCCESS)                             \
      ::zrt::fatal("%s:%d: %s failed: %s", __FILE__, __LINE__, #call,          \
                   cublasLtGetStatusString(zrtCublasStatus_));                   \
  } while (0)

#endif // ZRT_CUDA_CUDA_CHECK_H
