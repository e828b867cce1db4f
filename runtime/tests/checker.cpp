//===- checker.cpp - Checks and tensors for the runtime tests -------------===//

#include "tests/checker.h"
#include "core/check.h"
#include "cpu/dtype.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace zrt {

Checker::Checker(MPI_Comm comm) : comm(comm) {
  if (comm != MPI_COMM_NULL)
    ZRT_MPI_CHECK(MPI_Comm_rank(comm, &myRank));
}

void Checker::record(const std::string &name, bool ok,
                     const std::string &detail) {
  (ok ? passed : failed) += 1;
  if (myRank == 0)
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
  if (myRank == 0)
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

const char *dtypeName(int32_t dtype) {
  return dtype == ZRT_BF16 ? "bf16" : "f32";
}

double tolerance(int32_t dtype, double f32Tolerance) {
  return dtype == ZRT_BF16 ? std::max(f32Tolerance, kBf16Tolerance)
                           : f32Tolerance;
}

std::vector<float> representable(std::vector<float> values, int32_t dtype) {
  if (dtype == ZRT_BF16)
    for (float &v : values)
      v = bf16ToFloat(floatToBf16(v));
  return values;
}

Tensor::Tensor(int32_t dtype, const std::vector<float> &values)
    : dtype(dtype), n((int64_t)values.size()),
      bytes(n * dtypeSize("Tensor", dtype)) {
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == ZRT_BF16)
      store((Bf16 *)data(), i, values[i]);
    else
      store((float *)data(), i, values[i]);
  }
}

Tensor::Tensor(int32_t dtype, int64_t n)
    : Tensor(dtype, std::vector<float>(n, NAN)) {}

std::vector<float> Tensor::values() const {
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = dtype == ZRT_BF16 ? load((const Bf16 *)data(), i)
                               : load((const float *)data(), i);
  return out;
}

} // namespace zrt
