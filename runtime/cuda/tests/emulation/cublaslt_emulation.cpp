//===- cublaslt_emulation.cpp - cuBLASLt's matmul on the host -------------===//
//
// cuda_runtime_emulation.h's cuBLASLt section: written from the library's
// documented definition, not from matmul.cu's use of it, so that a wrong
// transpose, leading dimension or bias direction there shows here.
//
//===----------------------------------------------------------------------===//

#include "cuda_runtime_emulation.h"

#include "core/bf16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

struct EmulatedCublasLt {};

struct EmulatedMatmulDesc {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  cublasOperation_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void *bias = nullptr;
  int32_t biasType = -1; // -1: D's type
  void *aux = nullptr;
  int64_t auxLd = 0;
};

struct EmulatedMatrixLayout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld;
};

struct EmulatedMatmulPreference {
  uint64_t alignment[4] = {256, 256, 256, 256}; // A, B, C, D
  uint32_t reductionMask = CUBLASLT_REDUCTION_SCHEME_INPLACE |
                           CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE |
                           CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
};

namespace {

template <typename V>
cublasStatus_t readAttribute(V &out, const void *buffer, size_t bytes) {
  if (!buffer || bytes != sizeof(V))
    return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(&out, buffer, sizeof(V));
  return CUBLAS_STATUS_SUCCESS;
}

bool supportedType(int32_t type) {
  return type == CUDA_R_32F || type == CUDA_R_16BF;
}

double load(int32_t type, const void *base, int64_t index) {
  if (type == CUDA_R_16BF) {
    uint16_t bits;
    std::memcpy(&bits, static_cast<const char *>(base) + 2 * index, 2);
    return zrt::bf16::widenToFloat(bits);
  }
  float value;
  std::memcpy(&value, static_cast<const char *>(base) + 4 * index, 4);
  return value;
}

void store(int32_t type, void *base, int64_t index, double value) {
  if (type == CUDA_R_16BF) {
    uint16_t bits = zrt::bf16::roundFromFloat((float)value);
    std::memcpy(static_cast<char *>(base) + 2 * index, &bits, 2);
    return;
  }
  float f = (float)value;
  std::memcpy(static_cast<char *>(base) + 4 * index, &f, 4);
}

/// op(X)'s rows and columns.
void opShape(const EmulatedMatrixLayout &x, cublasOperation_t op,
             uint64_t &rows, uint64_t &cols) {
  rows = op == CUBLAS_OP_N ? x.rows : x.cols;
  cols = op == CUBLAS_OP_N ? x.cols : x.rows;
}

bool layoutValid(const EmulatedMatrixLayout &x) {
  return supportedType(x.type) && x.rows > 0 && x.cols > 0 &&
         x.ld >= (int64_t)x.rows;
}

uint64_t alignmentOf(const void *p) {
  uint64_t address = reinterpret_cast<uintptr_t>(p), align = 256;
  while (align > 1 && address % align != 0)
    align /= 2;
  return align;
}

/// The tanh approximation of GELU.
double gelu(double x) {
  const double c = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

bool hasBias(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_GELU_BIAS ||
         e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
}

} // namespace

const char *cublasLtGetStatusString(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
  *handle = new EmulatedCublasLt;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (scale != CUDA_R_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  *desc = new EmulatedMatmulDesc{compute, scale};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                               cublasLtMatmulDescAttributes_t attribute,
                               const void *buffer, size_t bytes) {
  switch (attribute) {
  case CUBLASLT_MATMUL_DESC_TRANSA:
    return readAttribute(desc->transA, buffer, bytes);
  case CUBLASLT_MATMUL_DESC_TRANSB:
    return readAttribute(desc->transB, buffer, bytes);
  case CUBLASLT_MATMUL_DESC_EPILOGUE:
    return readAttribute(desc->epilogue, buffer, bytes);
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    return readAttribute(desc->bias, buffer, bytes);
  case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
    return readAttribute(desc->biasType, buffer, bytes);
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
    return readAttribute(desc->aux, buffer, bytes);
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
    return readAttribute(desc->auxLd, buffer, bytes);
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout,
                                          cudaDataType_t type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  *layout = new EmulatedMatrixLayout{type, rows, cols, ld};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *preference) {
  *preference = new EmulatedMatmulPreference;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference) {
  delete preference;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t preference,
    cublasLtMatmulPreferenceAttributes_t attribute, const void *buffer,
    size_t bytes) {
  uint32_t value32 = 0;
  uint64_t value64 = 0;
  switch (attribute) {
  case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
    return readAttribute(value64, buffer, bytes);
  case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK:
    return readAttribute(preference->reductionMask, buffer, bytes);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: {
    cublasStatus_t status = readAttribute(value32, buffer, bytes);
    const int index = attribute - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES;
    preference->alignment[index] = value32;
    return status;
  }
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
    cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t preference, int requested,
    cublasLtMatmulHeuristicResult_t *results, int *returned) {
  *returned = 0;
  if (!handle || requested < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!layoutValid(*a) || !layoutValid(*b) || !layoutValid(*c) ||
      !layoutValid(*d) || c->rows != d->rows || c->cols != d->cols)
    return CUBLAS_STATUS_INVALID_VALUE;
  uint64_t aRows, aCols, bRows, bCols;
  opShape(*a, desc->transA, aRows, aCols);
  opShape(*b, desc->transB, bRows, bCols);
  if (aRows != d->rows || aCols != bRows || bCols != d->cols)
    return CUBLAS_STATUS_INVALID_VALUE;
  // The emulated algorithm has no split-K reduction (scheme NONE, value
  // 0), which no mask excludes: the mask filters the schemes an algorithm
  // uses, and it uses none. emu::fault "cublaslt-mask" takes the other
  // reading, in which only a mask allowing every scheme leaves algorithms
  // (matmul.cu must then fall back to one).
  if (emu::fault == "cublaslt-mask" &&
      preference->reductionMask != CUBLASLT_REDUCTION_SCHEME_MASK)
    return CUBLAS_STATUS_NOT_SUPPORTED; // no algorithm: *returned stays 0
  if (hasBias(desc->epilogue) && !desc->bias)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (desc->epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS &&
      (!desc->aux || desc->auxLd < (int64_t)d->rows || desc->auxLd % 8 != 0))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  cublasLtMatmulHeuristicResult_t &result = results[0];
  std::memset(&result, 0, sizeof(result));
  for (int i = 0; i < 4; ++i)
    result.algo.data[i] = preference->alignment[i];
  result.state = CUBLAS_STATUS_SUCCESS;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
               const void *alpha, const void *a, cublasLtMatrixLayout_t aLayout,
               const void *b, cublasLtMatrixLayout_t bLayout, const void *beta,
               const void *c, cublasLtMatrixLayout_t cLayout, void *d,
               cublasLtMatrixLayout_t dLayout, const cublasLtMatmulAlgo_t *algo,
               void *, size_t, cudaStream_t) {
  if (!handle || !algo)
    return CUBLAS_STATUS_INVALID_VALUE;
  // The algorithm was chosen for these alignments.
  const void *pointers[4] = {a, b, c, d};
  for (int i = 0; i < 4; ++i)
    if (alignmentOf(pointers[i]) < algo->data[i])
      return CUBLAS_STATUS_INVALID_VALUE;
  uint64_t m, k, kb, n;
  opShape(*aLayout, desc->transA, m, k);
  opShape(*bLayout, desc->transB, kb, n);
  if (kb != k || dLayout->rows != m || dLayout->cols != n)
    return CUBLAS_STATUS_INVALID_VALUE;
  float alphaValue, betaValue;
  std::memcpy(&alphaValue, alpha, 4);
  std::memcpy(&betaValue, beta, 4);
  const int32_t biasType =
      desc->biasType < 0 ? (int32_t)dLayout->type : desc->biasType;
  const bool applyGelu = desc->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS ||
                         desc->epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  // X(i, j) of a column-major layout is X[i + j ld]; op(X)(i, j) is X(j, i)
  // when transposed. op(A) and op(B) are widened once, row by row.
  auto widen = [](const void *x, const EmulatedMatrixLayout &layout,
                  cublasOperation_t op, uint64_t rows, uint64_t cols) {
    std::vector<double> out(rows * cols);
    for (uint64_t i = 0; i < rows; ++i)
      for (uint64_t j = 0; j < cols; ++j) {
        const uint64_t row = op == CUBLAS_OP_N ? i : j;
        const uint64_t col = op == CUBLAS_OP_N ? j : i;
        out[i * cols + j] =
            load(layout.type, x, (int64_t)(row + col * layout.ld));
      }
    return out;
  };
  const std::vector<double> opA = widen(a, *aLayout, desc->transA, m, k);
  const std::vector<double> opB = widen(b, *bLayout, desc->transB, k, n);
  std::vector<double> sums(n);
  for (uint64_t i = 0; i < m; ++i) {
    std::fill(sums.begin(), sums.end(), 0.0);
    for (uint64_t p = 0; p < k; ++p) {
      const double aip = opA[i * k + p];
      const double *bRow = &opB[p * n];
      for (uint64_t j = 0; j < n; ++j)
        sums[j] += aip * bRow[j];
    }
    for (uint64_t j = 0; j < n; ++j) {
      double value = alphaValue * sums[j];
      if (betaValue != 0)
        value +=
            betaValue * load(cLayout->type, c, (int64_t)(i + j * cLayout->ld));
      if (hasBias(desc->epilogue))
        value += load(biasType, desc->bias, (int64_t)i);
      if (desc->epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
        store(dLayout->type, desc->aux, (int64_t)(i + j * desc->auxLd), value);
      if (applyGelu)
        value = gelu(value);
      store(dLayout->type, d, (int64_t)(i + j * dLayout->ld), value);
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}
