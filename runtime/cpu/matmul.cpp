//===- matmul.cpp - zrt_matmul on OpenBLAS --------------------------------===//

#include "core/check.h"
#include "zero/zrt.h"

#include <cblas.h>

#include <algorithm>
#include <climits>

extern "C" void zrt_matmul(zrt_context *, const float *a, const float *b,
                           float *c, int64_t m, int64_t n, int64_t k,
                           int32_t transA, int32_t transB) {
  if (m < 0 || n < 0 || k < 0)
    zrt::fatal("zrt_matmul: negative shape m=%lld n=%lld k=%lld", (long long)m,
               (long long)n, (long long)k);
  // OpenBLAS's default interface takes 32-bit sizes.
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    zrt::fatal("zrt_matmul: shape m=%lld n=%lld k=%lld exceeds BLAS's int",
               (long long)m, (long long)n, (long long)k);
  if (m == 0 || n == 0)
    return;
  // Leading dimensions of the row-major operands as stored; BLAS insists on
  // at least 1 even when k == 0 (then c is just zeroed by beta = 0).
  int lda = (int)std::max<int64_t>(1, transA ? m : k);
  int ldb = (int)std::max<int64_t>(1, transB ? k : n);
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, 1.0f,
              a, lda, b, ldb, 0.0f, c, (int)n);
}
