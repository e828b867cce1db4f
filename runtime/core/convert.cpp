//===- convert.cpp - Element types as the core sees them ------------------===//

#include "core/convert.h"
#include "core/exact.h"

#include "core/bf16.h"

#include "zero/zrt.h"

#include <cmath>
#include <cstring>

namespace zrt {

uint16_t floatToBf16Bits(float value) { return bf16::roundFromFloat(value); }

float bf16BitsToFloat(uint16_t bits) { return bf16::widenToFloat(bits); }

float f16BitsToFloat(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 0x1f,
      mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp((float)mantissa, -24);
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp((float)(mantissa | 0x400), exponent - 25);
  return sign ? -magnitude : magnitude;
}

int64_t dtypeBytes(int32_t dtype) {
  switch (dtype) {
  case ZRT_F32:
    return 4;
  case ZRT_BF16:
    return 2;
  case ZRT_EXACT:
    return 16;
  }
  return 0;
}

const char *dtypeName(int32_t dtype) {
  switch (dtype) {
  case ZRT_F32:
    return "f32";
  case ZRT_BF16:
    return "bf16";
  case ZRT_EXACT:
    return "exact";
  }
  return "unknown dtype";
}

void storeFloats(int32_t dtype, const float *src, void *dst, int64_t first,
                 int64_t count) {
  if (dtype == ZRT_EXACT) {
    for (int64_t i = 0; i < count; ++i)
      storeExact(dst, first + i, toExact(src[i]));
    return;
  }
  if (dtype == ZRT_BF16) {
    uint16_t *out = (uint16_t *)dst + first;
    for (int64_t i = 0; i < count; ++i)
      out[i] = floatToBf16Bits(src[i]);
    return;
  }
  std::memcpy((float *)dst + first, src, count * sizeof(float));
}

} // namespace zrt
