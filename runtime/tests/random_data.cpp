//===- random_data.cpp - Random test inputs -------------------------------===//
#include "tests/random_data.h"

namespace zrt {

std::mt19937 testRng(42);

std::vector<float> randomVector(int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(testRng);
  return v;
}

std::vector<int32_t> randomInts(int64_t n, int32_t bound) {
  std::uniform_int_distribution<int32_t> dist(0, bound - 1);
  std::vector<int32_t> v(n);
  for (int32_t &x : v)
    x = dist(testRng);
  return v;
}

} // namespace zrt
