//===- dtype.h - The ABI's float dtypes, for every backend ----*- C++ -*-===//
//
// zrt.h's dtype argument (ZRT_F32, ZRT_BF16) turned into a C++ type, once
// for every backend: the CPU kernels' bfloat16 is cpu/dtype.h's Bf16, the
// CUDA kernels' is __nv_bfloat16, so each backend names its own with
// dispatchDtypeAs<Bf16Type>, and an unknown dtype stops the job with the same
// message on either. Plain C++ with no CUDA header: nvcc's host code
// includes it too.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_DTYPE_H
#define ZRT_CORE_DTYPE_H

#include "zero/zrt.h"

#include <cstdint>

namespace zrt {

/// Stops the job: `kernel` was called with a dtype zrt.h does not define,
/// or with ZRT_EXACT, which is not a float type (the message says so).
[[noreturn]] void unknownDtype(const char *kernel, int32_t dtype);

/// Bytes per element of `dtype`, ZRT_EXACT's 16 included: for what moves
/// elements as bytes (collectives, zrt_shard_slice). An unknown dtype stops
/// the job naming `kernel`.
int64_t dtypeSize(const char *kernel, int32_t dtype);

/// Bytes per element of a float dtype (f32, bf16); anything else, ZRT_EXACT
/// included, stops the job naming `kernel`. What the float kernels check.
int64_t floatDtypeSize(const char *kernel, int32_t dtype);

/// Calls fn(T{}) with T = float or `Bf16Type` according to `dtype`; a
/// kernel's entry point casts its void pointers to T inside fn. ZRT_EXACT
/// is refused like an unknown dtype: float kernels do not take it.
template <typename Bf16Type, typename Fn>
inline void dispatchDtypeAs(const char *kernel, int32_t dtype, Fn &&fn) {
  static_assert(sizeof(Bf16Type) == 2, "a bfloat16 type is 2 bytes");
  switch (dtype) {
  case ZRT_F32:
    fn(float{});
    return;
  case ZRT_BF16:
    fn(Bf16Type{});
    return;
  }
  unknownDtype(kernel, dtype);
}

} // namespace zrt

#endif // ZRT_CORE_DTYPE_H
