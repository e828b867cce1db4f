//===- matmul.cu - zrt_matmul and zrt_matmul_bias on cuBLASLt -------------===//
//
// cuBLASLt is column-major and zrt_matmul row-major. A row-major m x n
// matrix is, byte for byte, its column-major transpose, so instead of
// c = op(a) op(b) we ask cuBLASLt for c^T = op(b)^T op(a)^T: b becomes
// cuBLASLt's first operand, a its second, and the output is the
// column-major n x m matrix with leading dimension n, which is exactly the
// row-major c. No data is moved and the transpose flags pass straight
// through (see makePlan).
//
// Precision: float32 accumulation in both dtypes (CUBLAS_COMPUTE_32F, alpha
// and beta float32). bf16 operands and output (CUDA_R_16BF) are rounded once,
// at the end, as the CPU backend rounds its float32 sgemm result. float32
// GEMMs use TF32 tensor cores by default (CUBLAS_COMPUTE_32F_FAST_TF32: the
// inputs are rounded to a 10-bit mantissa, the accumulation stays float32),
// which is what PyTorch does with torch.backends.cuda.matmul.allow_tf32 and
// is 8x the IEEE throughput on an H100/H200; ZRT_CUDA_FP32_GEMM=ieee selects
// exact float32 (CUBLAS_COMPUTE_32F), e.g. to compare against the CPU
// backend at float32 rounding. The variable is read once per process.
// Split-K reductions are limited to "none" and "in float32 workspace":
// cuBLASLt's in-place scheme adds the partial sums in the output type, which
// for bf16 would round every partial product sum to bf16.
//
// Plans: a training step issues the same few dozen GEMM shapes every step,
// and the heuristic query costs far more than the GEMM's launch. Each
// distinct call (handle, dtype, shape, transposes, epilogue, and the
// pointers' alignments, which the heuristic takes into account) gets a plan
// (descriptors plus the chosen algorithm) on first use, kept for the life of
// the process. The plans are never destroyed: their descriptors are plain
// host memory, and destroying them in static destructors could race the
// library's own teardown.
//
//===----------------------------------------------------------------------===//

#include "core/epilogue.h"
#include "cuda/cuda_check.h"
#include "cuda/kernels.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

using namespace zrt;
using namespace zrt::cuda;

namespace {

enum class Fp32Gemm { Tf32, Ieee };

/// ZRT_CUDA_FP32_GEMM, read on first use: tf32 (default) or ieee.
Fp32Gemm fp32GemmMode() {
  static const Fp32Gemm mode = [] {
    const char *env = std::getenv("ZRT_CUDA_FP32_GEMM");
    if (!env || !*env || std::strcmp(env, "tf32") == 0)
      return Fp32Gemm::Tf32;
    if (std::strcmp(env, "ieee") == 0)
      return Fp32Gemm::Ieee;
    fatal("ZRT_CUDA_FP32_GEMM=%s: expected tf32 or ieee", env);
  }();
  return mode;
}

const char *dtypeName(int32_t dtype) {
  return dtype == ZRT_BF16 ? "bf16" : dtype == ZRT_F32 ? "f32" : "?";
}

/// The largest power of two, at most 256 (cuBLASLt's default assumption),
/// that divides the address.
uint32_t alignmentOf(const void *p) {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 1 && address % align != 0)
    align /= 2;
  return align;
}

/// Everything the heuristic's choice depends on.
struct PlanKey {
  cublasLtHandle_t handle;
  int32_t dtype;
  int64_t m, n, k;
  bool transA, transB;
  cublasLtEpilogue_t epilogue;
  uint32_t alignA, alignB, alignC, alignBias, alignAux;

  bool operator==(const PlanKey &o) const {
    return handle == o.handle && dtype == o.dtype && m == o.m && n == o.n &&
           k == o.k && transA == o.transA && transB == o.transB &&
           epilogue == o.epilogue && alignA == o.alignA && alignB == o.alignB &&
           alignC == o.alignC && alignBias == o.alignBias &&
           alignAux == o.alignAux;
  }
};

struct PlanKeyHash {
  size_t operator()(const PlanKey &key) const {
    size_t h = std::hash<const void *>()(key.handle);
    auto mix = [&h](uint64_t v) {
      h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) +
           (h >> 2);
    };
    mix((uint64_t)key.dtype);
    mix((uint64_t)key.m);
    mix((uint64_t)key.n);
    mix((uint64_t)key.k);
    mix((uint64_t)key.transA | (uint64_t)key.transB << 1 |
        (uint64_t)key.epilogue << 2);
    mix((uint64_t)key.alignA | (uint64_t)key.alignB << 16 |
        (uint64_t)key.alignC << 32 | (uint64_t)key.alignBias << 48);
    mix((uint64_t)key.alignAux);
    return h;
  }
};

/// The descriptors of one GEMM and the algorithm the heuristic chose. `lhs`
/// is cuBLASLt's A (our b), `rhs` its B (our a), `out` both C and D.
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t lhs = nullptr, rhs = nullptr, out = nullptr;
  cublasLtMatmulAlgo_t algo;
};

std::mutex &planMutex() {
  static std::mutex *mutex = new std::mutex;
  return *mutex;
}

std::unordered_map<PlanKey, std::unique_ptr<Plan>, PlanKeyHash> &plans() {
  static auto *map =
      new std::unordered_map<PlanKey, std::unique_ptr<Plan>, PlanKeyHash>;
  return *map;
}

bool hasBias(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_GELU_BIAS ||
         e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
}

template <typename V>
void setDesc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
             const V &value) {
  ZRT_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));
}

template <typename V>
void setPref(cublasLtMatmulPreference_t pref,
             cublasLtMatmulPreferenceAttributes_t attr, const V &value) {
  ZRT_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)));
}

/// Sets the epilogue's pointers: at plan creation (the heuristic reads their
/// alignment) and before every call (they change from call to call).
void setEpiloguePointers(const Plan &plan, cublasLtEpilogue_t epilogue,
                         const void *bias, void *aux) {
  if (hasBias(epilogue))
    setDesc(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  if (epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
    setDesc(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux);
}

std::unique_ptr<Plan> makePlan(const char *kernel, const PlanKey &key,
                               size_t workspaceBytes, const void *bias,
                               void *aux) {
  auto plan = std::make_unique<Plan>();
  cudaDataType_t type = key.dtype == ZRT_BF16 ? CUDA_R_16BF : CUDA_R_32F;
  cublasComputeType_t compute =
      key.dtype == ZRT_F32 && fp32GemmMode() == Fp32Gemm::Tf32
          ? CUBLAS_COMPUTE_32F_FAST_TF32
          : CUBLAS_COMPUTE_32F;
  ZRT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc, compute, CUDA_R_32F));

  // c^T[n,m] = op(b)^T[n,k] op(a)^T[k,m], all column-major. b as stored is
  // the column-major n x k matrix b^T (ld n) when !transB, so no transpose;
  // when transB it is stored n x k row-major = column-major k x n (ld k),
  // transposed by the op. Likewise a: column-major k x m (ld k) when !transA,
  // else m x k (ld m) transposed.
  cublasOperation_t opLhs = key.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opRhs = key.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  setDesc(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, opLhs);
  setDesc(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, opRhs);
  uint64_t m = key.m, n = key.n, k = key.k;
  if (key.transB)
    ZRT_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&plan->lhs, type, k, n, (int64_t)k));
  else
    ZRT_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&plan->lhs, type, n, k, (int64_t)n));
  if (key.transA)
    ZRT_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&plan->rhs, type, m, k, (int64_t)m));
  else
    ZRT_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&plan->rhs, type, k, m, (int64_t)k));
  ZRT_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&plan->out, type, n, m, (int64_t)n));

  if (key.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    // The bias runs along c^T's rows (length n: one value per column of the
    // row-major c), which is the broadcast cuBLASLt's bias epilogue does.
    setDesc(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, key.epilogue);
    setDesc(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, (int32_t)type);
    // The pre-activation (aux) has c's type, cuBLASLt's default; setting
    // EPILOGUE_AUX_DATA_TYPE is meant for narrow-precision outputs, and an
    // unsupported combination would fail the call.
    if (key.epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
      setDesc(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, (int64_t)n);
    setEpiloguePointers(*plan, key.epilogue, bias, aux);
  }

  cublasLtMatmulPreference_t pref;
  ZRT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  setPref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
          (uint64_t)workspaceBytes);
  // No split-K reduced in the output type (bf16 partial sums) or in place
  // (atomics, whose order varies run to run).
  setPref(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
          (uint32_t)(CUBLASLT_REDUCTION_SCHEME_NONE |
                     CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE));
  // cuBLASLt's A is our b, its B our a, C and D our c.
  setPref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.alignB);
  setPref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.alignA);
  setPref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.alignC);
  setPref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.alignC);

  cublasLtMatmulHeuristicResult_t result;
  std::memset(&result, 0, sizeof(result));
  int returned = 0;
  auto heuristic = [&] {
    std::memset(&result, 0, sizeof(result));
    returned = 0;
    return cublasLtMatmulAlgoGetHeuristic(key.handle, plan->desc, plan->lhs,
                                          plan->rhs, plan->out, plan->out, pref,
                                          1, &result, &returned);
  };
  cublasStatus_t status = heuristic();
  if (returned == 0 || result.state != CUBLAS_STATUS_SUCCESS) {
    // Whether the mask above leaves algorithms for every shape is known
    // only on a GPU: rather than stop every GEMM, allow any reduction, and
    // say once that results may then vary in their last bits.
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::fprintf(stderr,
                   "warning: %s: cuBLASLt offers no algorithm without a "
                   "split-K reduced in place or in the output type for "
                   "m=%lld n=%lld k=%lld; allowing any (such GEMMs may differ "
                   "run to run in their last bits)\n",
                   kernel, (long long)key.m, (long long)key.n,
                   (long long)key.k);
    });
    setPref(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
            (uint32_t)CUBLASLT_REDUCTION_SCHEME_MASK);
    status = heuristic();
  }
  ZRT_CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  if (status != CUBLAS_STATUS_SUCCESS || returned == 0 ||
      result.state != CUBLAS_STATUS_SUCCESS)
    fatal("%s: cuBLASLt offers no algorithm for dtype=%s m=%lld n=%lld "
          "k=%lld trans_a=%d trans_b=%d epilogue=%d (alignments a=%u b=%u "
          "c=%u): %s",
          kernel, dtypeName(key.dtype), (long long)key.m, (long long)key.n,
          (long long)key.k, (int)key.transA, (int)key.transB, (int)key.epilogue,
          key.alignA, key.alignB, key.alignC,
          cublasLtGetStatusString(
              status != CUBLAS_STATUS_SUCCESS ? status : result.state));
  plan->algo = result.algo;
  return plan;
}

void checkShape(const char *kernel, int32_t dtype, int64_t m, int64_t n,
                int64_t k) {
  if (dtype != ZRT_F32 && dtype != ZRT_BF16)
    fatal("%s: unsupported dtype %d", kernel, (int)dtype);
  if (m < 0 || n < 0 || k < 0)
    fatal("%s: negative shape m=%lld n=%lld k=%lld", kernel, (long long)m,
          (long long)n, (long long)k);
}

/// One cuBLASLt GEMM, m, n, k > 0, through the plan cache.
void runGemm(zrt_context *ctx, const char *kernel, int32_t dtype, const void *a,
             const void *b, void *c, int64_t m, int64_t n, int64_t k,
             int32_t transA, int32_t transB, cublasLtEpilogue_t epilogue,
             const void *bias, void *aux) {
  GemmResources res = gemmResources(ctx);
  PlanKey key{res.handle,
              dtype,
              m,
              n,
              k,
              transA != 0,
              transB != 0,
              epilogue,
              alignmentOf(a),
              alignmentOf(b),
              alignmentOf(c),
              hasBias(epilogue) ? alignmentOf(bias) : 0u,
              epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS ? alignmentOf(aux)
                                                          : 0u};
  // Kernels are issued from one thread, but the lock costs nothing next to
  // a launch and keeps the cache (and the pointer attributes set on a shared
  // descriptor just before its call) safe if that ever changes.
  std::lock_guard<std::mutex> lock(planMutex());
  auto &cache = plans();
  auto it = cache.find(key);
  if (it == cache.end())
    it =
        cache.emplace(key, makePlan(kernel, key, res.workspaceBytes, bias, aux))
            .first;
  const Plan &plan = *it->second;
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    setEpiloguePointers(plan, epilogue, bias, aux);
  const float alpha = 1.0f, beta = 0.0f;
  ZRT_CUBLAS_CHECK(cublasLtMatmul(res.handle, plan.desc, &alpha, b, plan.lhs, a,
                                  plan.rhs, &beta, c, plan.out, c, plan.out,
                                  &plan.algo, res.workspace, res.workspaceBytes,
                                  computeStream(ctx)));
}

} // namespace

void zrt::cuda::matmul(zrt_context *ctx, int32_t dtype, const void *a,
                       const void *b, void *c, int64_t m, int64_t n, int64_t k,
                       int32_t transA, int32_t transB) {
  const char *kernel = "zrt_matmul";
  checkShape(kernel, dtype, m, n, k);
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    // An empty sum: c = 0, without asking cuBLASLt for a k == 0 GEMM.
    size_t bytes = (size_t)m * (size_t)n * (dtype == ZRT_BF16 ? 2 : 4);
    ZRT_CUDA_CHECK(cudaMemsetAsync(c, 0, bytes, computeStream(ctx)));
    return;
  }
  runGemm(ctx, kernel, dtype, a, b, c, m, n, k, transA, transB,
          CUBLASLT_EPILOGUE_DEFAULT, nullptr, nullptr);
}

void zrt::cuda::matmulBias(zrt_context *ctx, int32_t dtype, const void *a,
                           const void *b, const void *bias, void *c,
                           void *preActivation, int64_t m, int64_t n, int64_t k,
                           int32_t transA, int32_t transB, int32_t epilogue) {
  checkEpilogue(epilogue, preActivation);
  const char *kernel = "zrt_matmul_bias";
  checkShape(kernel, dtype, m, n, k);
  if (m == 0 || n == 0)
    return;
  bool gelu = epilogue == ZRT_EPILOGUE_BIAS_GELU;
  void *sum = gelu ? preActivation : c;
  if (k == 0) {
    // An empty product: the sum is the bias on every row. Rare enough (a
    // layer without inputs) that the unfused kernels do.
    matmul(ctx, dtype, a, b, sum, m, n, k, transA, transB);
    biasAdd(ctx, dtype, sum, bias, sum, m, n);
  } else if (gelu && n % 8 != 0) {
    // cuBLASLt writes GELU's input (the aux output) only with a leading
    // dimension that is a multiple of 8: fuse the bias, apply GELU apart.
    runGemm(ctx, kernel, dtype, a, b, sum, m, n, k, transA, transB,
            CUBLASLT_EPILOGUE_BIAS, bias, nullptr);
  } else {
    // One GEMM: the sum goes to c, or with GELU the activation to c and the
    // sum to the aux output.
    runGemm(ctx, kernel, dtype, a, b, c, m, n, k, transA, transB,
            gelu ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_BIAS,
            bias, gelu ? preActivation : nullptr);
    return;
  }
  if (gelu)
    cuda::gelu(ctx, dtype, sum, c, m * n);
}
