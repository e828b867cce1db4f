//===- bf16.h - float32 <-> bfloat16 bits, host and device ------*- C++ -*-===//
//
// How the kernels round float32 to bfloat16, written once for the CPU
// kernels (cpu/dtype.h) and the CUDA kernels (cuda/device_math.cuh) so that
// the two backends stay bit-identical, NaNs included. Plain C++ with no CUDA
// header: under nvcc the functions are also device functions, elsewhere
// ordinary inline functions.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_BF16_H
#define ZRT_CORE_BF16_H

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define ZRT_HOST_DEVICE __host__ __device__ inline
#else
#define ZRT_HOST_DEVICE inline
#endif

// A namespace of its own: core/convert.h already declares out-of-line
// zrt::floatToBf16Bits and zrt::bf16BitsToFloat with the same signatures.
namespace zrt::bf16 {

/// The bits of `from` as a `To` of the same size: memcpy is defined
/// behaviour in C++17 (std::bit_cast is C++20), and nvcc compiles it to a
/// register move in device code.
template <typename To, typename From> ZRT_HOST_DEVICE To bitCast(From from) {
  static_assert(sizeof(To) == sizeof(From), "bitCast needs equal sizes");
  To to;
  std::memcpy(&to, &from, sizeof(to));
  return to;
}

/// Round to nearest, ties to even. NaNs stay NaN (quieted, sign kept): plain
/// rounding would carry a NaN whose payload lives only in the low 16 bits
/// into infinity. (The CUDA intrinsic __float2bfloat16_rn returns a canonical
/// NaN instead, which is why the device code does not use it.)
ZRT_HOST_DEVICE uint16_t roundFromFloat(float value) {
  const uint32_t bits = bitCast<uint32_t>(value);
  // Both arms in 32 bits and one narrowing at the end: the kernels then
  // compile to a single select, as they did before this was shared.
  uint32_t upper;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    upper = (bits >> 16) | 0x0040u;
  else
    upper = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return (uint16_t)upper;
}

/// Exact: a bfloat16 is the upper half of a float32.
ZRT_HOST_DEVICE float widenToFloat(uint16_t bits) {
  return bitCast<float>((uint32_t)bits << 16);
}

} // namespace zrt::bf16

#endif // ZRT_CORE_BF16_H
