//===- checker.h - Pass/fail bookkeeping for the runtime tests --*- C++ -*-===//
#ifndef ZRT_TESTS_CHECKER_H
#define ZRT_TESTS_CHECKER_H

#include <mpi.h>

#include <cstdint>
#include <string>

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

private:
  void record(const std::string &name, bool ok, const std::string &detail);

  MPI_Comm comm;
  int rank = 0;
  int passed = 0;
  int failed = 0;
};

/// max_i |got[i] - ref[i]| / max(1, |ref[i]|): relative for large values,
/// absolute near zero.
double maxError(const float *got, const double *ref, int64_t n);
double maxError(const float *got, const float *ref, int64_t n);

} // namespace zrt

#endif // ZRT_TESTS_CHECKER_H
