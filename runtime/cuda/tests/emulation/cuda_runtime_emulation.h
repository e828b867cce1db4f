//===- cuda_runtime_emulation.h - CUDA's host API, emulated ---*- C++ -*-===//
//
// The part of the CUDA runtime API (and of cuBLASLt's and CUB's) that the
// backend's launch code in cuda/*.cu calls, over host memory, so that the
// .cu files themselves (not a copy of their host code) compile as C++ for
// the host emulator of cuda_emulation.h: tests/emulation/include holds
// stand-ins for <cuda_runtime.h>, <cuda_bf16.h>, <cublasLt.h> and CUB's
// radix sort that include this header. Every call runs at once (a stream is
// only a name), which is a legal schedule of stream-ordered work.
//
// What a GPU would refuse, this refuses too, with the same error code: a
// launch of more than 48 KiB of dynamic shared memory without
// cudaFuncSetAttribute's opt-in, an opt-in above an H200's 227 KiB, a block
// of more than 1024 threads, and a cudaMemcpyAsync between overlapping
// ranges (undefined on a GPU). Memory from cudaMallocAsync starts filled
// with 0xff bytes (NaN), so a kernel reading scratch nothing wrote shows.
//
// cuBLASLt's matmul API is emulated from its documented definition (see its
// section below), so that matmul.cu's mapping of row-major GEMMs onto it
// (transposes, leading dimensions, the bias's direction, the aux output) is
// checked without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_TESTS_EMULATION_CUDA_RUNTIME_EMULATION_H
#define ZRT_CUDA_TESTS_EMULATION_CUDA_RUNTIME_EMULATION_H

#include "cuda_emulation.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

//===--- Errors, streams, memory ------------------------------------------===//

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
};
typedef struct EmulatedCudaStream *cudaStream_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);
/// The error of the last failed launch since the previous call, then
/// cudaSuccess.
cudaError_t cudaGetLastError();
cudaError_t cudaGetDevice(int *device);

cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t stream);
template <typename T>
cudaError_t cudaMallocAsync(T **ptr, size_t bytes, cudaStream_t stream) {
  return cudaMallocAsync(reinterpret_cast<void **>(ptr), bytes, stream);
}
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dstPitch, const void *src,
                              size_t srcPitch, size_t width, size_t height,
                              cudaMemcpyKind kind,
                              cudaStream_t stream = nullptr);

namespace emu {
/// The dynamic shared memory `kernel` was allowed with
/// cudaFuncSetAttribute (0: none, so 48 KiB).
cudaError_t setMaxDynamicSharedMemory(const void *kernel, int bytes);
size_t maxDynamicSharedMemory(const void *kernel);
/// OS threads the emulator spreads a launch's blocks over.
void setLaunchWorkers(int workers);
int launchWorkers();
/// Records `error` for the next cudaGetLastError.
void setLaunchError(cudaError_t error);
} // namespace emu

template <typename Kernel>
cudaError_t cudaFuncSetAttribute(Kernel *kernel, cudaFuncAttribute attribute,
                                 int value) {
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize)
    return cudaErrorInvalidValue;
  return emu::setMaxDynamicSharedMemory(reinterpret_cast<const void *>(kernel),
                                        value);
}

/// `kernel<<<grid, block, smemBytes, stream>>>(args...)` (cuda/launch.cuh):
/// runs at once on the emulator, or records the launch error a GPU would
/// give for the configuration.
template <typename... Params, typename... Args>
void emulatedLaunch(void (*kernel)(Params...), dim3 grid, dim3 block,
                    size_t smemBytes, Args &&...args) {
  const size_t threads = (size_t)block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || grid.x == 0 || grid.y == 0 ||
      grid.z == 0 ||
      smemBytes >
          emu::maxDynamicSharedMemory(reinterpret_cast<const void *>(kernel))) {
    emu::setLaunchError(cudaErrorInvalidConfiguration);
    return;
  }
  emu::launch(
      grid, block, smemBytes, [&] { kernel(args...); }, emu::launchWorkers());
}

//===--- cuBLASLt ---------------------------------------------------------===//
//
// The descriptors, the heuristic and cublasLtMatmul as the cuBLASLt
// documentation defines them, computed on the host (cublaslt_emulation.cpp):
// column-major matrices of `rows` x `cols` with leading dimension `ld`,
// D = alpha op(A) op(B) + beta C, a BIAS epilogue adding bias[i] to row i of
// D, GELU_AUX_BIAS writing the pre-activation to the aux matrix (whose
// leading dimension must be a multiple of 8) and GELU (tanh form) to D.
// Products are summed in double and each output rounded once to its type.
// The heuristic offers an algorithm only for consistent shapes, and
// cublasLtMatmul refuses pointers less aligned than the preference the
// algorithm was chosen for, as the real library may.

enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
const char *cublasLtGetStatusString(cublasStatus_t status);

enum cudaDataType_t { CUDA_R_32F = 0, CUDA_R_16BF = 14 };
enum cublasComputeType_t {
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77
};
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum cublasLtEpilogue_t {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_GELU_BIAS = 36,
  CUBLASLT_EPILOGUE_GELU_AUX_BIAS = 164
};
enum cublasLtMatmulDescAttributes_t {
  CUBLASLT_MATMUL_DESC_TRANSA = 3,
  CUBLASLT_MATMUL_DESC_TRANSB = 4,
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 10,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 11,
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26
};
enum cublasLtMatmulPreferenceAttributes_t {
  CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3,
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8
};
enum cublasLtReductionScheme_t {
  CUBLASLT_REDUCTION_SCHEME_NONE = 0,
  CUBLASLT_REDUCTION_SCHEME_INPLACE = 1,
  CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE = 2,
  CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE = 4,
  CUBLASLT_REDUCTION_SCHEME_MASK = 7
};

typedef struct EmulatedCublasLt *cublasLtHandle_t;
typedef struct EmulatedMatmulDesc *cublasLtMatmulDesc_t;
typedef struct EmulatedMatrixLayout *cublasLtMatrixLayout_t;
typedef struct EmulatedMatmulPreference *cublasLtMatmulPreference_t;
/// The alignments (bytes) of A, B, C and D the algorithm was chosen for.
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle);
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle);
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
                                        cublasComputeType_t computeType,
                                        cudaDataType_t scaleType);
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc);
cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                               cublasLtMatmulDescAttributes_t attribute,
                               const void *buffer, size_t bytes);
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout,
                                          cudaDataType_t type, uint64_t rows,
                                          uint64_t cols, int64_t ld);
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout);
cublasStatus_t
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *preference);
cublasStatus_t
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference);
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t preference,
    cublasLtMatmulPreferenceAttributes_t attribute, const void *buffer,
    size_t bytes);
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
    cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t preference, int requested,
    cublasLtMatmulHeuristicResult_t *results, int *returned);
cublasStatus_t
cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
               const void *alpha, const void *a, cublasLtMatrixLayout_t aLayout,
               const void *b, cublasLtMatrixLayout_t bLayout, const void *beta,
               const void *c, cublasLtMatrixLayout_t cLayout, void *d,
               cublasLtMatrixLayout_t dLayout, const cublasLtMatmulAlgo_t *algo,
               void *workspace, size_t workspaceBytes, cudaStream_t stream);

//===--- CUB's radix sort -------------------------------------------------===//

namespace cub {
struct DeviceRadixSort {
  /// Stable sort of (key, value) pairs by bits [beginBit, endBit) of the
  /// key; with `temp` null, sets tempBytes (CUB's two-call protocol).
  template <typename Key, typename Value>
  static cudaError_t
  SortPairs(void *temp, size_t &tempBytes, const Key *keysIn, Key *keysOut,
            const Value *valuesIn, Value *valuesOut, int n, int beginBit = 0,
            int endBit = sizeof(Key) * 8, cudaStream_t stream = nullptr);
};
} // namespace cub

template <typename Key, typename Value>
cudaError_t
cub::DeviceRadixSort::SortPairs(void *temp, size_t &tempBytes,
                                const Key *keysIn, Key *keysOut,
                                const Value *valuesIn, Value *valuesOut, int n,
                                int beginBit, int endBit, cudaStream_t) {
  if (!temp) {
    tempBytes = 256; // any size: the caller must allocate and pass it
    return cudaSuccess;
  }
  if (n < 0 || beginBit < 0 || endBit > (int)sizeof(Key) * 8 ||
      beginBit > endBit)
    return cudaErrorInvalidValue;
  using Bits = unsigned long long;
  const Bits mask = endBit - beginBit >= 64
                        ? ~Bits(0)
                        : ((Bits(1) << (endBit - beginBit)) - 1);
  auto digit = [&](int i) { return ((Bits)keysIn[i] >> beginBit) & mask; };
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return digit(a) < digit(b); });
  std::vector<Key> keys(n);
  std::vector<Value> values(n);
  for (int i = 0; i < n; ++i) {
    keys[i] = keysIn[order[i]];
    values[i] = valuesIn[order[i]];
  }
  std::copy(keys.begin(), keys.end(), keysOut);
  std::copy(values.begin(), values.end(), valuesOut);
  return cudaSuccess;
}

#endif // ZRT_CUDA_TESTS_EMULATION_CUDA_RUNTIME_EMULATION_H
