//===- data.h - Synthetic, learnable classification data --------*- C++ -*-===//
#ifndef ZRT_DRIVER_DATA_H
#define ZRT_DRIVER_DATA_H

#include <cstdint>
#include <vector>

namespace zrt {

/// Sample i of the data set has features x[i,j] ~ N(0, 1) and the label
/// argmax_c sum_j x[i,j] T[j,c] for a fixed random teacher matrix T, so a
/// linear model (or better) can learn it and the loss falls. Everything is
/// keyed on (seed, i, j): any world size sees the same global batch.
class SyntheticData {
public:
  SyntheticData(uint64_t seed, int64_t numFeatures, int64_t numClasses);

  /// Fills `rows` consecutive samples starting at global sample index
  /// `firstSample`: features (rows x numFeatures) and labels (rows).
  void fill(int64_t firstSample, int64_t rows, float *features,
            int32_t *labels) const;

private:
  uint64_t seed;
  int64_t numFeatures;
  int64_t numClasses;
  std::vector<double> teacher; // numFeatures x numClasses, row-major
};

} // namespace zrt

#endif // ZRT_DRIVER_DATA_H
