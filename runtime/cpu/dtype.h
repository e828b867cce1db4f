//===- dtype.h - Storage types of float tensors (f32, bf16) -----*- C++ -*-===//
//
// Kernels are written once, as templates over the storage type T (float or
// Bf16), and compute in float32: load() widens an element, store() rounds a
// float32 result back. dispatchDtype() turns the ABI's dtype argument into
// that T (core/dtype.h, shared with the CUDA backend), so a kernel's dtype
// dispatch is one line, given its name for the error an unknown dtype
// raises.
//
// The conversions are inline because they sit in every kernel's inner loop.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CPU_DTYPE_H
#define ZRT_CPU_DTYPE_H

#include "core/bf16.h"
#include "core/dtype.h"
#include "zero/zrt.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>

namespace zrt {

/// A bfloat16 value: the upper 16 bits of an IEEE float32. A distinct type
/// (not uint16_t) so that overloads cannot confuse it with an integer.
struct Bf16 {
  uint16_t bits;
};

/// Rounded as core/bf16.h says, the one rounding the CPU and CUDA backends
/// share.
inline Bf16 floatToBf16(float value) {
  return Bf16{bf16::roundFromFloat(value)};
}

inline float bf16ToFloat(Bf16 value) { return bf16::widenToFloat(value.bits); }

inline float load(const float *data, int64_t i) { return data[i]; }
inline float load(const Bf16 *data, int64_t i) { return bf16ToFloat(data[i]); }
inline void store(float *data, int64_t i, float value) { data[i] = value; }
inline void store(Bf16 *data, int64_t i, float value) {
  data[i] = floatToBf16(value);
}

/// Calls fn(T{}) with T = float or Bf16 according to `dtype` (core/dtype.h);
/// a kernel casts its void pointers to T inside fn.
template <typename Fn>
inline void dispatchDtype(const char *kernel, int32_t dtype, Fn &&fn) {
  dispatchDtypeAs<Bf16>(kernel, dtype, fn);
}

/// `n` floats of scratch borrowed from the calling thread's pool and given
/// back when the lease ends. The bf16 GEMMs widen their operands on every
/// call, up to 150 MB at a time for GPT-2's tied head: freshly allocated
/// memory of that size page-faults on every touch, which cost more than the
/// widening itself. The pool keeps its blocks for the thread's life (as
/// before, kernel workspace, which the compiler's memory plan and the ledger
/// do not count); a lease takes the smallest free block that is large
/// enough, else replaces the largest free one.
class ScratchLease {
public:
  ScratchLease() = default;
  explicit ScratchLease(int64_t n);
  ScratchLease(const ScratchLease &) = delete;
  ScratchLease &operator=(const ScratchLease &) = delete;
  ~ScratchLease();
  float *get() const { return block.get(); }

private:
  std::unique_ptr<float[]> block;
  int64_t capacity = 0;
};

/// A float32 copy of `n` elements of `dtype` at `data`, or `data` itself when
/// it already is float32: lets BLAS-based kernels (matmul, attention) serve
/// bf16 by widening their operands once.
class FloatInput {
public:
  FloatInput(const char *kernel, int32_t dtype, const void *data, int64_t n);
  const float *get() const { return ptr; }

private:
  std::optional<ScratchLease> copy;
  const float *ptr;
};

/// A float32 buffer for a result of `n` elements of `dtype` at `data`: the
/// destination itself for float32, scratch for bf16 that commit() rounds
/// into the destination.
class FloatOutput {
public:
  FloatOutput(const char *kernel, int32_t dtype, void *data, int64_t n);
  float *get() { return ptr; }
  void commit();

private:
  std::optional<ScratchLease> scratch;
  float *ptr;
  void *destination;
  int32_t dtype;
  int64_t n;
};

} // namespace zrt

#endif // ZRT_CPU_DTYPE_H
