//===- matmul.cpp - zrt_matmul and zrt_matmul_bias on OpenBLAS ------------===//
//
// float32 goes through cblas_sgemm. bf16 is the fp32-accumulating bf16 GEMM
// that GPUs do, the float32 result rounded once: on AMX tiles where the CPU
// has them (cpu/amx_gemm.h), else with AVX512-BF16's pairwise dot products
// where it has those (the same file; it rounds to bf16 as it stores), else
// by widening both operands to float32 scratch for sgemm. Either way the
// scratch, (m + n) * k + m * n floats at most, is not charged to the
// ledger: the compiler's memory plan models tensors, not a kernel's
// workspace.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/epilogue.h"
#include "cpu/amx_gemm.h"
#include "cpu/dtype.h"
#include "cpu/kernels.h"

#include <cblas.h>

#include <algorithm>
#include <climits>

using namespace zrt;

void zrt::cpu::matmul(zrt_context *, int32_t dtype, const void *a,
                      const void *b, void *c, int64_t m, int64_t n, int64_t k,
                      int32_t transA, int32_t transB) {
  floatDtypeSize("zrt_matmul", dtype);
  if (m < 0 || n < 0 || k < 0)
    fatal("zrt_matmul: negative shape m=%lld n=%lld k=%lld", (long long)m,
          (long long)n, (long long)k);
  // OpenBLAS's default interface takes 32-bit sizes.
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    fatal("zrt_matmul: shape m=%lld n=%lld k=%lld exceeds BLAS's int",
          (long long)m, (long long)n, (long long)k);
  if (m == 0 || n == 0)
    return;
  if (dtype == ZRT_BF16 && cpu::amxAvailable()) {
    FloatOutput c32("zrt_matmul", dtype, c, m * n);
    cpu::amxGemmBf16(static_cast<const uint16_t *>(a),
                     static_cast<const uint16_t *>(b), c32.get(), m, n, k,
                     transA, transB);
    c32.commit();
    return;
  }
  if (dtype == ZRT_BF16 && cpu::avx512Bf16Available()) {
    cpu::avx512Bf16GemmBf16(static_cast<const uint16_t *>(a),
                            static_cast<const uint16_t *>(b),
                            static_cast<uint16_t *>(c), m, n, k, transA,
                            transB);
    return;
  }
  FloatInput a32("zrt_matmul", dtype, a, m * k);
  FloatInput b32("zrt_matmul", dtype, b, k * n);
  FloatOutput c32("zrt_matmul", dtype, c, m * n);
  // Leading dimensions of the row-major operands as stored; BLAS insists on
  // at least 1 even when k == 0 (then c is just zeroed by beta = 0).
  int lda = (int)std::max<int64_t>(1, transA ? m : k);
  int ldb = (int)std::max<int64_t>(1, transB ? k : n);
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, 1.0f,
              a32.get(), lda, b32.get(), ldb, 0.0f, c32.get(), (int)n);
  c32.commit();
}

void zrt::cpu::matmulBias(zrt_context *ctx, int32_t dtype, const void *a,
                          const void *b, const void *bias, void *c,
                          void *preActivation, int64_t m, int64_t n, int64_t k,
                          int32_t transA, int32_t transB, int32_t epilogue) {
  checkEpilogue(epilogue, preActivation);
  // The three kernels in sequence, each rounding as it does unfused, so
  // that fusing never changes a result on the CPU. The sum lands where the
  // epilogue wants it and is finished in place. Called through the ABI, so
  // the trace shows each inside matmul_bias.
  bool gelu = epilogue == ZRT_EPILOGUE_BIAS_GELU;
  void *sum = gelu ? preActivation : c;
  zrt_matmul(ctx, dtype, a, b, sum, m, n, k, transA, transB);
  zrt_bias_add(ctx, dtype, sum, bias, sum, m, n);
  if (gelu)
    zrt_gelu(ctx, dtype, sum, c, m * n);
}
