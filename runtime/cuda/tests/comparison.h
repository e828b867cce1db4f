//===- comparison.h - How the CUDA kernels' results are compared ----------===//
//
// The comparison both zrt-cuda-kernel-tests (a real GPU) and
// zrt-cuda-kernels-emulated (the host emulator) make between a kernel's
// result and the CPU backend's on the same inputs.
//
// Tolerances, as max |got - cpu| / max(1, |cpu|) (relative above 1, absolute
// below; one line per check prints the error and the tolerance):
//  - exact (compared bit for bit): copy, fill, cast, shard_slice, slice_cols
//    and its gradient, embedding, relu and its gradient: no arithmetic, or
//    one rounding both backends do alike;
//  - kElementwise, 1e-5 in f32: one formula per element, where only the
//    last bits of expf/tanhf/sqrtf may differ;
//  - kReduction, 1e-4 in f32: sums over up to a few thousand terms in
//    another order (the CPU sums some in double, a GPU in float trees), and
//    RoPE's angles, which the backends may round differently at large
//    positions;
//  - kGemm, 1e-2 in f32: matmul and attention, which may run on TF32 tensor
//    cores (10-bit significands) over reductions of up to 768 terms;
//  - bf16: the f32 result rounded once to 8 significant bits may land one
//    ulp (2^-7 relative) apart when the float32 results differ in their
//    last bits: 2 ulps for most kernels, 4 for attention, whose GPU kernel
//    may round the softmax probabilities to bf16 for the tensor cores, and
//    for matmul_bias, which the CPU rounds after each of its three steps.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_TESTS_COMPARISON_H
#define ZRT_CUDA_TESTS_COMPARISON_H

#include "zero/zrt.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace zrt::cuda::test {

constexpr double kElementwise = 1e-5;
constexpr double kReduction = 1e-4;
constexpr double kGemm = 1e-2;
constexpr double kBf16Ulp = 1.0 / 128;

/// The tolerance of a check: `f32` for float32 results, `bf16Ulps` ulps for
/// bf16 ones.
inline double tol(int32_t dtype, double f32, int bf16Ulps = 2) {
  return dtype == ZRT_BF16 ? bf16Ulps * kBf16Ulp : f32;
}

/// Worst error over all elements; NaN where exactly one side is NaN (a
/// skipped element) or the sizes differ, 0 where both are NaN.
inline double worstError(const std::vector<float> &got,
                         const std::vector<float> &cpu) {
  if (got.size() != cpu.size())
    return NAN;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) || std::isnan(cpu[i])) {
      if (std::isnan(got[i]) != std::isnan(cpu[i]))
        return NAN;
      continue;
    }
    if (std::isinf(got[i]) || std::isinf(cpu[i])) {
      if (got[i] != cpu[i])
        return NAN;
      continue;
    }
    double error = std::fabs((double)got[i] - cpu[i]) /
                   std::max(1.0, std::fabs((double)cpu[i]));
    worst = std::max(worst, error);
  }
  return worst;
}

/// worstError over corresponding outputs of one check: `gotOut` held by
/// `got`, `cpuOut` by `cpu`. A test tool's buffer set provides
/// `read(ptr)`, the elements as floats.
template <typename BufferSet>
double worstOutputError(const BufferSet &got, const std::vector<void *> &gotOut,
                        const BufferSet &cpu,
                        const std::vector<void *> &cpuOut) {
  double worst = 0;
  for (size_t i = 0; i < cpuOut.size(); ++i) {
    double error = worstError(got.read(gotOut[i]), cpu.read(cpuOut[i]));
    worst = std::isnan(error) ? error : std::max(worst, error);
    if (std::isnan(worst))
      break;
  }
  return worst;
}

/// Empty when every output is the same bit for bit, else which output
/// differs first and at which byte. The buffer set provides
/// `readBytes(ptr)`.
template <typename BufferSet>
std::string
firstByteDifference(const BufferSet &got, const std::vector<void *> &gotOut,
                    const BufferSet &cpu, const std::vector<void *> &cpuOut) {
  for (size_t i = 0; i < cpuOut.size(); ++i) {
    std::vector<unsigned char> a = got.readBytes(gotOut[i]);
    std::vector<unsigned char> b = cpu.readBytes(cpuOut[i]);
    if (a.size() != b.size())
      return "output " + std::to_string(i) + " differs in size";
    for (size_t j = 0; j < a.size(); ++j)
      if (a[j] != b[j])
        return "output " + std::to_string(i) + " differs first at byte " +
               std::to_string(j);
  }
  return "";
}

} // namespace zrt::cuda::test

#endif // ZRT_CUDA_TESTS_COMPARISON_H
