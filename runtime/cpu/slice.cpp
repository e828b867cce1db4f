//===- slice.cpp - Column blocks of a matrix, forward and backward --------===//
//
// GPT-2's fused attention projection yields [tokens, 3 * width]; the query,
// key and value are its three column blocks. The copies move raw elements,
// so one byte-wise implementation serves every dtype.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "cpu/dtype.h"
#include "cpu/kernels.h"

#include <cstring>

using namespace zrt;

static void checkBlock(const char *kernel, int64_t cols, int64_t offset,
                       int64_t size) {
  if (offset < 0 || size < 0 || offset + size > cols)
    fatal("%s: columns [%lld, %lld) lie outside a matrix of %lld columns",
          kernel, (long long)offset, (long long)(offset + size),
          (long long)cols);
}

void zrt::cpu::sliceCols(zrt_context *, int32_t dtype, const void *x, void *y,
                         int64_t rows, int64_t cols, int64_t offset,
                         int64_t size) {
  checkBlock("zrt_slice_cols", cols, offset, size);
  int64_t elem = floatDtypeSize("zrt_slice_cols", dtype);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy((char *)y + r * size * elem,
                (const char *)x + (r * cols + offset) * elem, size * elem);
}

void zrt::cpu::sliceColsGrad(zrt_context *, int32_t dtype, const void *dy,
                             void *dx, int64_t rows, int64_t cols,
                             int64_t offset, int64_t size) {
  checkBlock("zrt_slice_cols_grad", cols, offset, size);
  int64_t elem = floatDtypeSize("zrt_slice_cols_grad", dtype);
  // Zero bits are 0.0 in float32 and bfloat16 alike.
  std::memset(dx, 0, rows * cols * elem);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy((char *)dx + (r * cols + offset) * elem,
                (const char *)dy + r * size * elem, size * elem);
}
