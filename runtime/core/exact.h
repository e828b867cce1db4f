//===- exact.h - ZRT_EXACT: 128-bit fixed point, exact sums -----*- C++ -*-===//
//
// The scalar arithmetic of zrt.h's ZRT_EXACT, once for every user: the CPU
// kernels (cpu/exact.cpp), the MPI sum of the CPU transport
// (cpu/mpi_transport.cpp), the driver's sum of the micro-batches' losses
// (driver/driver.cpp) and the CUDA kernels (cuda/exact_kernels.cuh, device
// code, and its host emulation). Plain C++ with no CUDA header: under nvcc
// the functions are __host__ __device__, so they are written with what both
// sides have (no __builtin_add_overflow, no __int128 <-> floating
// conversions, which nvcc's device code lacks).
//
// An element is value * 2^64 as a two's-complement __int128 (16 bytes,
// little-endian). ZRT_EXACT_NAN (INT128_MIN) is NaN: what a non-finite
// value, a value of magnitude 2^62 or more, or an overflowing sum gives; it
// absorbs every sum and converts back to a float NaN. Sums of elements are
// integer sums, so they do not depend on their order (short of the
// overflow, which needs a sum of magnitude near 2^63).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_EXACT_H
#define ZRT_CORE_EXACT_H

#include "zero/zrt.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define ZRT_EXACT_FN __host__ __device__ inline
#else
#define ZRT_EXACT_FN inline
#endif

namespace zrt {

typedef __int128 Exact;
typedef unsigned __int128 ExactBits;

static_assert(sizeof(Exact) == 16, "ZRT_EXACT elements are 16 bytes");
static_assert(ZRT_EXACT_FRACTION_BITS == 64, "exact.h assumes 2^64 scaling");

/// INT128_MIN: the NaN of ZRT_EXACT.
constexpr Exact kExactNaN = (Exact)((ExactBits)1 << 127);

/// value * 2^64 rounded to the nearest integer (ties to even); NaN for a
/// non-finite value or one of magnitude 2^62 or more. A float32, and the
/// square of one computed in double, convert exactly up to that rounding.
ZRT_EXACT_FN Exact toExact(double value) {
  // !(a < b) is true for NaN too.
  if (!(fabs(value) < 0x1p62))
    return kExactNaN;
  double scaled = value * 0x1p64; // exact: a power of two, no overflow
  if (fabs(scaled) < 0x1p63)
    // The common case (|value| < 1/2): the rounding and the conversion in
    // one instruction, in the default rounding mode (to nearest even).
    return (Exact)(int64_t)llrint(scaled);
  // |scaled| >= 2^63 > 2^53: the double is already an integer. Split its
  // magnitude into 64-bit halves; both are exact (the low half is a run of
  // the double's own significand bits).
  double magnitude = fabs(scaled);
  double high = floor(ldexp(magnitude, -64));
  double low = magnitude - ldexp(high, 64);
  ExactBits bits = ((ExactBits)(uint64_t)high << 64) | (uint64_t)low;
  return scaled < 0 ? -(Exact)bits : (Exact)bits;
}

/// The float32 nearest to v * 2^-64 (ties to even); NaN for kExactNaN.
ZRT_EXACT_FN float fromExact(Exact v) {
  if (v == kExactNaN) {
#if defined(__CUDA_ARCH__)
    return __int_as_float(0x7fc00000);
#else
    return NAN;
#endif
  }
  // Every scaling below is by a power of two and exact: |v| >= 1 gives at
  // least 2^-64, far from float's subnormals.
  if ((int64_t)v == v)
    // The common case (|value| < 1/2): an int64 -> float conversion rounds
    // correctly (to nearest even).
    return (float)(int64_t)v * 0x1p-64f;
  ExactBits magnitude = v < 0 ? (ExactBits)(-v) : (ExactBits)v;
  float result;
  uint64_t high = (uint64_t)(magnitude >> 64);
  if (high == 0) {
    // A uint64 -> float conversion rounds correctly too.
    result = (float)(uint64_t)magnitude * 0x1p-64f;
  } else {
    // Keep the top 64 bits, with the bits shifted out ORed into the lowest
    // kept one (a sticky bit 40 places below float's last bit): the one
    // rounding to float then rounds as the whole value would.
#if defined(__CUDA_ARCH__)
    int shift = 64 - __clzll((long long)high);
#else
    int shift = 64 - __builtin_clzll(high);
#endif
    // shift is 1..63: the magnitude is below 2^127.
    uint64_t top = (uint64_t)(magnitude >> shift);
    uint64_t lost = (uint64_t)magnitude & ((1ull << shift) - 1);
    top |= lost != 0;
    result = ldexpf((float)top, shift - 64);
  }
  return v < 0 ? -result : result;
}

/// a + b, NaN when either is NaN or the sum overflows (a sum that lands on
/// INT128_MIN itself is NaN too: that is its bit pattern).
ZRT_EXACT_FN Exact exactAdd(Exact a, Exact b) {
  if (a == kExactNaN || b == kExactNaN)
    return kExactNaN;
  Exact sum = (Exact)((ExactBits)a + (ExactBits)b); // wraps, no UB
  // Overflow: both operands of one sign, the sum of the other.
  if (((a ^ sum) & (b ^ sum)) < 0)
    return kExactNaN;
  return sum;
}

#undef ZRT_EXACT_FN

/// Element i of a ZRT_EXACT buffer, which need not be 16-byte aligned.
inline Exact loadExact(const void *data, int64_t i) {
  Exact v;
  memcpy(&v, (const char *)data + 16 * i, sizeof(v));
  return v;
}
inline void storeExact(void *data, int64_t i, Exact v) {
  memcpy((char *)data + 16 * i, &v, sizeof(v));
}

} // namespace zrt

#endif // ZRT_CORE_EXACT_H
