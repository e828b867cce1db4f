//===- convert.h - Element types as the core sees them ----------*- C++ -*-===//
//
// The driver fills, initialises, loads and saves buffers of every dtype the
// ABI knows, plus the f16 that checkpoints may carry. These conversions must
// round exactly as zrt_cast does (nearest, ties to even), so that a bf16
// parameter is bit for bit the rounded float32 master at every world size.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_CONVERT_H
#define ZRT_CORE_CONVERT_H

#include <cstdint>

namespace zrt {

/// float32 -> bf16 bits, round to nearest even; NaN stays a quiet NaN.
uint16_t floatToBf16Bits(float value);
float bf16BitsToFloat(uint16_t bits);
/// IEEE half (binary16) bits -> float32, exact (subnormals included).
float f16BitsToFloat(uint16_t bits);

/// Bytes per element of a zrt_dtype (16 for ZRT_EXACT), or 0 for an
/// unknown one.
int64_t dtypeBytes(int32_t dtype);
/// "f32", "bf16", "exact" or "unknown dtype".
const char *dtypeName(int32_t dtype);

/// Stores `count` floats into `dst` (a buffer of `dtype`) from element
/// `first` on (into ZRT_EXACT as exact(value), core/exact.h).
void storeFloats(int32_t dtype, const float *src, void *dst, int64_t first,
                 int64_t count);

} // namespace zrt

#endif // ZRT_CORE_CONVERT_H
