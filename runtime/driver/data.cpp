//===- data.cpp - Synthetic, learnable classification data ----------------===//

#include "driver/data.h"
#include "core/rng.h"

namespace zrt {

SyntheticData::SyntheticData(uint64_t seed, int64_t numFeatures,
                             int64_t numClasses)
    : seed(seed), numFeatures(numFeatures), numClasses(numClasses),
      teacher(numFeatures * numClasses) {
  for (int64_t i = 0; i < numFeatures * numClasses; ++i)
    teacher[i] = normalAt(seed, StreamTeacher, 0, i);
}

void SyntheticData::fill(int64_t firstSample, int64_t rows, float *features,
                         int32_t *labels) const {
  std::vector<double> scores(numClasses);
  for (int64_t r = 0; r < rows; ++r) {
    uint64_t sample = firstSample + r;
    float *x = features + r * numFeatures;
    scores.assign(numClasses, 0.0);
    for (int64_t j = 0; j < numFeatures; ++j) {
      x[j] = (float)normalAt(seed, StreamFeatures, sample, j);
      for (int64_t c = 0; c < numClasses; ++c)
        scores[c] += (double)x[j] * teacher[j * numClasses + c];
    }
    // Ties go to the lowest class; the scores are computed the same way on
    // every rank, so the labels never depend on the world size.
    int32_t best = 0;
    for (int64_t c = 1; c < numClasses; ++c)
      if (scores[c] > scores[best])
        best = (int32_t)c;
    labels[r] = best;
  }
}

} // namespace zrt
