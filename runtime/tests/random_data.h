//===- random_data.h - Random test inputs ------------------------*- C++ -*-===//
//
// One seeded generator per test tool, so that a failing check is reproduced
// by rerunning the tool: zrt-kernel-tests and zrt-cuda-kernel-tests draw
// their inputs from it.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_TESTS_RANDOM_DATA_H
#define ZRT_TESTS_RANDOM_DATA_H

#include <cstdint>
#include <random>
#include <vector>

namespace zrt {

/// Seeded with 42; a tool may reseed it before drawing.
extern std::mt19937 testRng;

/// n floats uniform in [lo, hi).
std::vector<float> randomVector(int64_t n, float lo = -1.0f, float hi = 1.0f);
/// n ints uniform in [0, bound).
std::vector<int32_t> randomInts(int64_t n, int32_t bound);
/// A rotary inverse-frequency table for zrt_rope: theta^(-2i/head_dim), the
/// lower frequencies (the upper pairs) divided by 8 as a rope scaling would,
/// so that a kernel that ignored the table and used theta would be caught.
std::vector<float> ropeTestFrequencies(int64_t headDim, float theta);

} // namespace zrt

#endif // ZRT_TESTS_RANDOM_DATA_H
