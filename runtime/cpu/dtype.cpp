//===- dtype.cpp - float32 views of f32 and bf16 tensors ------------------===//

#include "cpu/dtype.h"

#include <type_traits>

namespace zrt {

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
