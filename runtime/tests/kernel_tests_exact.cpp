//===- kernel_tests_exact.cpp - The exact sums (ZRT_EXACT) ----------------===//
//
// accumulate_exact, sum_squares_exact, from_exact and zrt_fill of ZRT_EXACT
// against references that do not use core/exact.h: x * 2^64 in long double
// (a 64-bit significand holds a float32 and its square exactly), rounded by
// nearbyintl, converted by GCC; GCC's own __int128 -> float conversion for
// from_exact. Every check is bit for bit.
//
//===----------------------------------------------------------------------===//

#include "core/exact.h"
#include "tests/kernel_tests.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace zrt {
namespace {

/// The exact element of value `x` (nearest, ties to even), or NaN, by the
/// contract of zrt.h, computed in long double.
Exact referenceExact(long double x) {
  if (!(std::fabs(x) < 0x1p62L))
    return kExactNaN;
  return (Exact)std::nearbyintl(std::ldexp(x, 64));
}

/// a + b with zrt.h's NaN and overflow rules, by GCC's overflow builtin.
Exact referenceAdd(Exact a, Exact b) {
  Exact sum;
  if (a == kExactNaN || b == kExactNaN || __builtin_add_overflow(a, b, &sum))
    return kExactNaN;
  return sum;
}

/// The float nearest v * 2^-64: GCC's conversion, then an exact scaling.
float referenceFloat(Exact v) {
  return v == kExactNaN ? NAN : std::ldexp((float)v, -64);
}

bool sameBits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

std::string hex(Exact v) {
  char text[40];
  std::snprintf(text, sizeof text, "%016llx%016llx",
                (unsigned long long)((ExactBits)v >> 64),
                (unsigned long long)(uint64_t)v);
  return text;
}

/// Floats of magnitudes 2^-70 to 2^40, either sign, in `dtype`.
std::vector<float> wideValues(int64_t n, int32_t dtype) {
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-70, 40), sign(0, 1);
  std::vector<float> values(n);
  for (float &v : values)
    v = std::ldexp(mantissa(testRng), exponent(testRng)) *
        (sign(testRng) ? -1.0f : 1.0f);
  return representable(values, dtype);
}

/// One value accumulated into a one-element accumulator.
Exact accumulateOne(zrt_context *ctx, Exact acc, float x) {
  zrt_accumulate_exact(ctx, ZRT_F32, &x, &acc, 1);
  return acc;
}

void testAccumulate(zrt_context *ctx, Checker &check, int32_t dtype) {
  const int64_t n = 1003;
  std::string name = std::string("accumulate_exact ") + dtypeName(dtype);
  // Three additions into accumulators that start from exact values.
  std::vector<Exact> acc(n), ref(n);
  for (int64_t i = 0; i < n; ++i)
    acc[i] = ref[i] = referenceExact(wideValues(1, ZRT_F32)[0]);
  for (int round = 0; round < 3; ++round) {
    auto x = wideValues(n, dtype);
    Tensor xT(dtype, x);
    zrt_accumulate_exact(ctx, dtype, xT.data(), acc.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ref[i] = referenceAdd(ref[i], referenceExact(x[i]));
  }
  int64_t bad = -1;
  for (int64_t i = 0; i < n && bad < 0; ++i)
    if (acc[i] != ref[i])
      bad = i;
  check.expectTrue(name + " vs 128-bit reference (bit-exact)", bad < 0,
                   bad < 0 ? "" : "element " + std::to_string(bad) + ": " +
                                      hex(acc[bad]) + " != " + hex(ref[bad]));
}

void testOrderIndependence(zrt_context *ctx, Checker &check) {
  auto values = wideValues(2000, ZRT_F32);
  std::vector<float> shuffled = values;
  std::shuffle(shuffled.begin(), shuffled.end(), testRng);
  Exact forward = 0, backward = 0, mixed = 0;
  for (float v : values)
    forward = accumulateOne(ctx, forward, v);
  for (auto it = values.rbegin(); it != values.rend(); ++it)
    backward = accumulateOne(ctx, backward, *it);
  for (float v : shuffled)
    mixed = accumulateOne(ctx, mixed, v);
  // The float sums of the same orders differ (the check would otherwise
  // prove little).
  float f1 = 0, f2 = 0;
  for (float v : values)
    f1 += v;
  for (float v : shuffled)
    f2 += v;
  check.expectTrue("accumulate_exact of 2000 values in 3 orders: identical "
                   "bytes (float32 sums of two of the orders differ)",
                   forward == backward && forward == mixed && f1 != f2,
                   hex(forward) + " " + hex(backward) + " " + hex(mixed));
}

void testExactness(zrt_context *ctx, Checker &check) {
  // 2^40 + 2^-20 - 2^40: float32 loses the small term, the exact sum keeps
  // it; so does 2^-60 + 2^-60 + 1 - 1 (2^-59).
  Exact acc = 0;
  for (float v : {0x1p40f, 0x1p-20f, -0x1p40f})
    acc = accumulateOne(ctx, acc, v);
  float got = NAN;
  zrt_from_exact(ctx, &acc, &got, 1);
  Exact small = 0;
  for (float v : {0x1p-60f, 0x1p-60f, 1.0f, -1.0f})
    small = accumulateOne(ctx, small, v);
  float gotSmall = NAN;
  zrt_from_exact(ctx, &small, &gotSmall, 1);
  check.expectTrue("accumulate_exact 2^40 + 2^-20 - 2^40 == 2^-20, "
                   "2^-60 + 2^-60 + 1 - 1 == 2^-59 (float32 gives 0)",
                   got == 0x1p-20f && gotSmall == 0x1p-59f);
  // Below 2^-64 the conversion rounds to nearest, ties to even:
  // 2^-65 -> 0 (0.5), 3 * 2^-65 -> 2 (1.5), 5 * 2^-65 -> 2 (2.5),
  // -3 * 2^-65 -> -2, 3 * 2^-66 -> 1 (0.75).
  struct Case {
    float x;
    Exact expected;
  } cases[] = {{0x1p-65f, 0},  {0x3p-65f, 2}, {0x5p-65f, 2},
               {-0x3p-65f, -2}, {0x3p-66f, 1}, {0x1p-100f, 0}};
  bool ok = true;
  std::string detail;
  for (const Case &c : cases) {
    Exact a = accumulateOne(ctx, 0, c.x);
    if (a != c.expected) {
      ok = false;
      detail += std::to_string(c.x) + " -> " + hex(a) + "; ";
    }
  }
  check.expectTrue("accumulate_exact rounds below 2^-64 to nearest, ties to "
                   "even",
                   ok, detail);
}

void testNaNAndOverflow(zrt_context *ctx, Checker &check) {
  const float largest = 0x1p62f * (1.0f - 0x1p-24f); // the largest below 2^62
  struct Case {
    float x;
    bool nan;
  } cases[] = {{NAN, true},     {INFINITY, true}, {-INFINITY, true},
               {0x1p62f, true}, {-0x1p62f, true}, {0x1p100f, true},
               {largest, false}, {-largest, false}};
  bool ok = true;
  for (const Case &c : cases) {
    Exact a = accumulateOne(ctx, 0, c.x);
    float back = NAN;
    zrt_from_exact(ctx, &a, &back, 1);
    ok &= c.nan ? a == kExactNaN && std::isnan(back)
                : a != kExactNaN && back == c.x;
  }
  check.expectTrue("accumulate_exact NaN, +-Inf, |x| >= 2^62 -> NaN "
                   "sentinel -> from_exact NaN; the largest float below 2^62 "
                   "round-trips",
                   ok);
  // The sentinel absorbs whatever is added to it.
  Exact nan = kExactNaN;
  for (float v : {1.0f, -1.0f, 0.0f, 0x1p40f})
    nan = accumulateOne(ctx, nan, v);
  check.expectTrue("accumulate_exact NaN sentinel + finite stays NaN",
                   nan == kExactNaN);
  // Two of the largest make about 2^63 (fits: the limit is 2^63, the
  // value of INT128_MAX); a third overflows. Both signs.
  bool overflowOk = true;
  for (float sign : {1.0f, -1.0f}) {
    Exact acc = 0;
    acc = accumulateOne(ctx, acc, sign * largest);
    acc = accumulateOne(ctx, acc, sign * largest);
    overflowOk &= acc != kExactNaN && acc == 2 * referenceExact(sign * largest);
    acc = accumulateOne(ctx, acc, sign * largest);
    overflowOk &= acc == kExactNaN;
  }
  check.expectTrue("accumulate_exact overflow beyond 2^63 -> NaN sentinel "
                   "(both signs)",
                   overflowOk);
}

void testSumSquaresExact(zrt_context *ctx, Checker &check, int32_t dtype) {
  const int64_t n = 1001;
  std::string name = std::string("sum_squares_exact ") + dtypeName(dtype);
  auto x = representable(randomVector(n, -3.0f, 3.0f), dtype);
  // Tiny values too, whose squares round below 2^-64.
  for (int64_t i = 0; i < n; i += 7)
    x[i] = representable({x[i] * 1e-9f}, dtype)[0];
  Tensor xT(dtype, x);
  Exact start = referenceExact(0.375L);
  Exact ref = start;
  for (float v : x)
    ref = referenceAdd(ref, referenceExact((long double)v * v));
  Exact whole = start;
  zrt_sum_squares_exact(ctx, dtype, xT.data(), &whole, n);
  check.expectTrue(name + " vs long double reference (bit-exact)",
                   whole == ref, hex(whole) + " != " + hex(ref));
  // The same bits however x is split, and in whatever order the parts come.
  const size_t elem = dtype == ZRT_BF16 ? 2 : 4;
  bool splitOk = true;
  for (int64_t cut : {1, 333, 500, 1000}) {
    Exact parts = start;
    const char *base = (const char *)xT.data();
    zrt_sum_squares_exact(ctx, dtype, base + cut * elem, &parts, n - cut);
    zrt_sum_squares_exact(ctx, dtype, base, &parts, cut);
    splitOk &= parts == whole;
  }
  check.expectTrue(name + " split in two parts (either order) == whole",
                   splitOk);
  // A square of 2^62 or more (|x| >= 2^31) is NaN; so is a non-finite x.
  float big[3] = {1.0f, 0x1p31f, 2.0f};
  Tensor bigT(dtype, std::vector<float>(big, big + 3));
  Exact nan = 0;
  zrt_sum_squares_exact(ctx, dtype, bigT.data(), &nan, 3);
  check.expectTrue(name + " x^2 >= 2^62 -> NaN sentinel", nan == kExactNaN);
}

void testFromExact(zrt_context *ctx, Checker &check) {
  const Exact one = (Exact)1 << 64;
  struct Case {
    Exact v;
    float expected;
    const char *what;
  } cases[] = {
      {one + ((Exact)1 << 40), 1.0f, "1 + 2^-24 (tie) -> 1"},
      {one + ((Exact)3 << 40), 1.0f + 0x1p-22f, "1 + 3*2^-24 (tie) -> 1 + 2^-22"},
      {one + ((Exact)1 << 40) + 1, 1.0f + 0x1p-23f,
       "1 + 2^-24 + 2^-64 (just above a tie) -> 1 + 2^-23"},
      {-(one + ((Exact)1 << 40)), -1.0f, "-(1 + 2^-24) -> -1"},
      {-(one + ((Exact)1 << 40) + 1), -(1.0f + 0x1p-23f),
       "-(1 + 2^-24 + 2^-64) -> -(1 + 2^-23)"},
      {((Exact)1 << 24) + 1, 0x1p-40f, "2^-40 (1 + 2^-24) (tie) -> 2^-40"},
      {((Exact)1 << 24) + 3, 0x1p-40f * (1.0f + 0x1p-22f),
       "2^-40 (1 + 3*2^-24) (tie) -> 2^-40 (1 + 2^-22)"},
      {1, 0x1p-64f, "1 -> 2^-64"},
      {-1, -0x1p-64f, "-1 -> -2^-64"},
      {0, 0.0f, "0 -> 0"},
      {~(Exact)0 ^ kExactNaN, 0x1p63f, "INT128_MAX -> 2^63"},
      {kExactNaN + 1, -0x1p63f, "INT128_MIN + 1 -> -2^63"},
      {kExactNaN, NAN, "the NaN sentinel -> NaN"},
  };
  for (const Case &c : cases) {
    float got = 0;
    zrt_from_exact(ctx, &c.v, &got, 1);
    check.expectTrue(std::string("from_exact ") + c.what,
                     sameBits(got, c.expected));
  }
  // Random values of every bit length, both signs, against GCC's
  // conversion; n > 1, from an unaligned buffer.
  const int64_t n = 4000;
  std::vector<Exact> values(n);
  std::uniform_int_distribution<uint64_t> word;
  std::uniform_int_distribution<int> bits(1, 127);
  for (Exact &v : values) {
    ExactBits raw = ((ExactBits)word(testRng) << 64) | word(testRng);
    int b = bits(testRng);
    v = (Exact)(raw >> (128 - b));
    if (word(testRng) & 1)
      v = -v;
  }
  std::vector<unsigned char> unaligned(n * 16 + 8);
  std::memcpy(unaligned.data() + 8, values.data(), n * 16);
  std::vector<float> out(n, NAN);
  zrt_from_exact(ctx, unaligned.data() + 8, out.data(), n);
  int64_t bad = -1;
  for (int64_t i = 0; i < n && bad < 0; ++i)
    if (!sameBits(out[i], referenceFloat(values[i])))
      bad = i;
  check.expectTrue("from_exact 4000 random values of 1-127 bits vs GCC's "
                   "__int128 -> float (bit-exact)",
                   bad < 0, bad < 0 ? "" : hex(values[bad]));
}

void testFillAndLocalCollectives(zrt_context *ctx, Checker &check) {
  const int64_t n = 5;
  std::vector<Exact> buffer(n, 12345);
  zrt_fill(ctx, ZRT_EXACT, buffer.data(), n, 0.0f);
  bool zero = std::all_of(buffer.begin(), buffer.end(),
                          [](Exact v) { return v == 0; });
  zrt_fill(ctx, ZRT_EXACT, buffer.data(), n, -1.5f);
  bool value = std::all_of(buffer.begin(), buffer.end(), [](Exact v) {
    return v == -(((Exact)3) << 63);
  });
  check.expectTrue("fill exact 0 and -1.5 (bit-exact)", zero && value);
  // One rank without MPI: the collectives copy 16-byte elements.
  std::vector<Exact> x(n), y(n, 0), shard(n + 1, 7);
  for (int64_t i = 0; i < n; ++i)
    x[i] = ((Exact)i << 100) - 3 * i;
  zrt_all_reduce(ctx, ZRT_GROUP_WORLD, ZRT_EXACT, x.data(), y.data(), n,
                 "exact");
  bool ok = y == x;
  zrt_reduce_scatter(ctx, ZRT_GROUP_WORLD, ZRT_EXACT, x.data(), shard.data(), n,
                     n, "exact");
  ok &= std::equal(x.begin(), x.end(), shard.begin()) && shard[n] == 7;
  std::fill(y.begin(), y.end(), 0);
  zrt_all_gather(ctx, ZRT_GROUP_WORLD, ZRT_EXACT, x.data(), y.data(), n, n,
                 "exact");
  ok &= y == x;
  check.expectTrue("all_reduce, reduce_scatter, all_gather exact on one "
                   "rank copy 16-byte elements",
                   ok);
}

} // namespace

void testExact(zrt_context *ctx, Checker &check) {
  for (int32_t dtype : kDtypes)
    testAccumulate(ctx, check, dtype);
  testOrderIndependence(ctx, check);
  testExactness(ctx, check);
  testNaNAndOverflow(ctx, check);
  for (int32_t dtype : kDtypes)
    testSumSquaresExact(ctx, check, dtype);
  testFromExact(ctx, check);
  testFillAndLocalCollectives(ctx, check);
}

} // namespace zrt
