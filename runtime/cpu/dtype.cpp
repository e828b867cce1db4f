//===- dtype.cpp - Storage types: sizes, errors, float32 views ------------===//

#include "cpu/dtype.h"
#include "core/check.h"

#include <type_traits>

namespace zrt {

void unknownDtype(const char *kernel, int32_t dtype) {
  fatal("%s: unknown dtype %d (expected %d for f32 or %d for bf16)", kernel,
        dtype, ZRT_F32, ZRT_BF16);
}

int64_t dtypeSize(const char *kernel, int32_t dtype) {
  switch (dtype) {
  case ZRT_F32:
    return sizeof(float);
  case ZRT_BF16:
    return sizeof(Bf16);
  }
  unknownDtype(kernel, dtype);
}

FloatInput::FloatInput(const char *kernel, int32_t dtype, const void *data,
                       int64_t n) {
  ptr = (const float *)data;
  dispatchDtype(kernel, dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float>) {
      copy.resize(n);
      for (int64_t i = 0; i < n; ++i)
        copy[i] = load((const T *)data, i);
      ptr = copy.data();
    }
  });
}

FloatOutput::FloatOutput(const char *kernel, int32_t dtype, void *data,
                         int64_t n)
    : ptr((float *)data), destination(data), dtype(dtype), n(n) {
  // Validates the dtype now, before the kernel writes anything.
  dtypeSize(kernel, dtype);
  if (dtype != ZRT_F32) {
    scratch.resize(n);
    ptr = scratch.data();
  }
}

void FloatOutput::commit() {
  if (dtype == ZRT_BF16)
    for (int64_t i = 0; i < n; ++i)
      store((Bf16 *)destination, i, scratch[i]);
}

} // namespace zrt
