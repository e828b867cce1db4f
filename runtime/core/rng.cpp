//===- rng.cpp - Counter-based random numbers -----------------------------===//

#include "core/rng.h"

#include <cmath>

namespace zrt {

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t fnv1a(const char *text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const unsigned char *c = (const unsigned char *)text; *c; ++c)
    hash = (hash ^ *c) * 0x100000001b3ULL;
  return hash;
}

// Chaining the mix through each key part makes keys that differ in any part
// (or only in the order of parts) independent.
static uint64_t hashKey(uint64_t seed, uint64_t stream, uint64_t id,
                        uint64_t index) {
  return mix64(mix64(mix64(mix64(seed) ^ stream) ^ id) ^ index);
}

static constexpr double kTwoToMinus24 = 1.0 / 16777216.0;

double uniformAt(uint64_t seed, uint64_t stream, uint64_t id, uint64_t index) {
  return (double)(hashKey(seed, stream, id, index) >> 40) * kTwoToMinus24;
}

double normalAt(uint64_t seed, uint64_t stream, uint64_t id, uint64_t index) {
  // u1 in (0, 1] keeps the logarithm finite.
  double u1 = 1.0 - uniformAt(seed, stream, id, 2 * index);
  double u2 = uniformAt(seed, stream, id, 2 * index + 1);
  const double twoPi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(twoPi * u2);
}

} // namespace zrt
