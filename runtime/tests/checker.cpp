//===- checker.cpp - Pass/fail bookkeeping for the runtime tests ----------===//

#include "tests/checker.h"
#include "core/check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace zrt {

Checker::Checker(MPI_Comm comm) : comm(comm) {
  if (comm != MPI_COMM_NULL)
    ZRT_MPI_CHECK(MPI_Comm_rank(comm, &rank));
}

void Checker::record(const std::string &name, bool ok,
                     const std::string &detail) {
  (ok ? passed : failed) += 1;
  if (rank == 0)
    std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(),
                detail.empty() ? "" : ": ", detail.c_str());
  std::fflush(stdout);
}

void Checker::expectClose(const std::string &name, double error,
                          double tolerance) {
  if (comm != MPI_COMM_NULL)
    ZRT_MPI_CHECK(
        MPI_Allreduce(MPI_IN_PLACE, &error, 1, MPI_DOUBLE, MPI_MAX, comm));
  // A NaN error must fail, hence the negated comparison.
  bool ok = !(error > tolerance) && !std::isnan(error);
  char detail[96];
  std::snprintf(detail, sizeof(detail), "max error %.3g (tolerance %.3g)",
                error, tolerance);
  record(name, ok, detail);
}

void Checker::expectTrue(const std::string &name, bool ok,
                         const std::string &detail) {
  int flag = ok;
  if (comm != MPI_COMM_NULL)
    ZRT_MPI_CHECK(
        MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LAND, comm));
  record(name, flag, flag ? "" : detail);
}

int Checker::finish() {
  if (rank == 0)
    std::printf("%d passed, %d failed\n", passed, failed);
  std::fflush(stdout);
  return failed == 0 ? 0 : 1;
}

double maxError(const float *got, const double *ref, int64_t n) {
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double error =
        std::fabs(got[i] - ref[i]) / std::max(1.0, std::fabs(ref[i]));
    if (std::isnan(error))
      return error;
    worst = std::max(worst, error);
  }
  return worst;
}

double maxError(const float *got, const float *ref, int64_t n) {
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double r = ref[i];
    double error = std::fabs(got[i] - r) / std::max(1.0, std::fabs(r));
    if (std::isnan(error))
      return error;
    worst = std::max(worst, error);
  }
  return worst;
}

} // namespace zrt
