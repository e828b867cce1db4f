//===- rng.h - Counter-based random numbers ---------------------*- C++ -*-===//
//
// Every random value the runtime produces is a pure function of a key
// (seed, stream, id, index). No generator state is carried from one value to
// the next, so a rank can produce exactly the elements of its shard, and the
// full tensor is the same at every world size.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_RNG_H
#define ZRT_CORE_RNG_H

#include <cstdint>

namespace zrt {

/// Separate streams keep parameter init, data and the teacher independent
/// even when their ids and indices coincide.
enum RngStream : uint64_t {
  StreamParamInit = 1,
  StreamFeatures = 2,
  StreamTeacher = 3,
};

/// splitmix64's finaliser: a bijective 64-bit mix.
uint64_t mix64(uint64_t x);

/// FNV-1a, 64-bit: names parameters in the key.
uint64_t fnv1a(const char *text);

/// Uniform in [0, 1) with 24 random bits (exactly representable in float).
double uniformAt(uint64_t seed, uint64_t stream, uint64_t id, uint64_t index);

/// Standard normal by Box-Muller from two uniforms keyed on (2 index) and
/// (2 index + 1).
double normalAt(uint64_t seed, uint64_t stream, uint64_t id, uint64_t index);

} // namespace zrt

#endif // ZRT_CORE_RNG_H
