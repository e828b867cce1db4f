//===- checker.h - Checks and tensors for the runtime tests -----*- C++ -*-===//
#ifndef ZRT_TESTS_CHECKER_H
#define ZRT_TESTS_CHECKER_H

#include "zero/zrt.h"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace zrt {

/// Records named checks and prints one line per check. With a communicator,
/// every check is decided over all ranks (worst error, all must hold) and
/// only rank 0 prints, so the output is the same at every world size.
class Checker {
public:
  explicit Checker(MPI_Comm comm = MPI_COMM_NULL);

  /// Passes when `error` <= `tolerance`.
  void expectClose(const std::string &name, double error, double tolerance);
  /// Passes when `ok`; `detail` is printed on failure.
  void expectTrue(const std::string &name, bool ok,
                  const std::string &detail = "");
  /// Prints "N passed, M failed" and returns the process exit code.
  int finish();
  /// This process's rank in the communicator (0 without one).
  int rank() const { return myRank; }

private:
  void record(const std::string &name, bool ok, const std::string &detail);

  MPI_Comm comm;
  int myRank = 0;
  int passed = 0;
  int failed = 0;
};

/// max_i |got[i] - ref[i]| / max(1, |ref[i]|): relative for large values,
/// absolute near zero.
double maxError(const float *got, const double *ref, int64_t n);
double maxError(const float *got, const float *ref, int64_t n);

/// The storage types every kernel and collective is tested in.
constexpr int32_t kDtypes[] = {ZRT_F32, ZRT_BF16};
/// Tolerance of a bf16 result computed in float32 and rounded once to an
/// 8-bit significand: rounding to nearest errs by at most 2^-8 relative (at
/// values just above a power of two); this allows twice that.
constexpr double kBf16Tolerance = 1.0 / 128;

/// "f32" or "bf16", for check names.
const char *dtypeName(int32_t dtype);
/// `f32Tolerance` for f32, at least kBf16Tolerance for bf16.
double tolerance(int32_t dtype, double f32Tolerance);
/// `values` rounded to what `dtype` holds (a copy for f32).
std::vector<float> representable(std::vector<float> values, int32_t dtype);

/// A tensor stored as `dtype`, built from and read back as floats.
class Tensor {
public:
  Tensor(int32_t dtype, const std::vector<float> &values);
  /// `n` elements, every one NaN: a kernel that skips an element shows.
  Tensor(int32_t dtype, int64_t n);
  void *data() { return bytes.data(); }
  const void *data() const { return bytes.data(); }
  std::vector<float> values() const;

private:
  int32_t dtype;
  int64_t n;
  std::vector<unsigned char> bytes;
};

} // namespace zrt

#endif // ZRT_TESTS_CHECKER_H
