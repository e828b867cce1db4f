//===- random_data.cpp - Random test inputs -------------------------------===//
#include "tests/random_data.h"

#include <cmath>

namespace zrt {

std::mt19937 testRng(42);

std::vector<float> randomVector(int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(testRng);
  return v;
}

std::vector<float> ropeTestFrequencies(int64_t headDim, float theta) {
  std::vector<float> f(headDim / 2);
  for (size_t i = 0; i < f.size(); ++i)
    f[i] = std::pow(theta, -2.0f * i / headDim) / (2 * i >= f.size() ? 8 : 1);
  return f;
}

std::vector<int32_t> randomInts(int64_t n, int32_t bound) {
  std::uniform_int_distribution<int32_t> dist(0, bound - 1);
  std::vector<int32_t> v(n);
  for (int32_t &x : v)
    x = dist(testRng);
  return v;
}

} // namespace zrt
