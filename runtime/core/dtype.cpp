//===- dtype.cpp - Sizes of the ABI's dtypes, the unknown-dtype error -----===//

#include "core/dtype.h"
#include "core/check.h"

namespace zrt {

void unknownDtype(const char *kernel, int32_t dtype) {
  if (dtype == ZRT_EXACT)
    fatal("%s: dtype ZRT_EXACT (%d) is not a float type: it is only for the "
          "exact kernels (zrt_accumulate_exact, zrt_sum_squares_exact, "
          "zrt_from_exact), zrt_fill, zrt_copy, zrt_shard_slice and the "
          "collectives",
          kernel, dtype);
  fatal("%s: unknown dtype %d (expected %d for f32 or %d for bf16)", kernel,
        dtype, ZRT_F32, ZRT_BF16);
}

int64_t dtypeSize(const char *kernel, int32_t dtype) {
  if (dtype == ZRT_EXACT)
    return 16;
  return floatDtypeSize(kernel, dtype);
}

int64_t floatDtypeSize(const char *kernel, int32_t dtype) {
  switch (dtype) {
  case ZRT_F32:
    return 4;
  case ZRT_BF16:
    return 2;
  }
  unknownDtype(kernel, dtype);
}

} // namespace zrt
