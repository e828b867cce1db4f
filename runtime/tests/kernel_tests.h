//===- kernel_tests.h - Shared pieces of zrt-kernel-tests -------*- C++ -*-===//
//
// Every kernel is tested in both storage types. Inputs are drawn in float and
// rounded to what the dtype can hold before the kernel and the double
// reference both see them, so the only bf16 error left is the kernel's own:
// float32 arithmetic and one rounding of each result to an 8-bit
// significand (see kBf16Tolerance).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_TESTS_KERNEL_TESTS_H
#define ZRT_TESTS_KERNEL_TESTS_H

#include "core/context.h"
#include "tests/checker.h"
#include "tests/random_data.h"

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace zrt {

/// Tolerance of a backward kernel against central differences of its forward
/// (float32, h = 1e-2: truncation ~h^2 and rounding ~1e-7 / h, both far
/// below it).
constexpr double kFiniteDifferenceTolerance = 2e-3;

/// Central differences, in float32 through the kernels themselves, of
/// L(x) = sum_j dy[j] * forward()[j] with respect to every element of x
/// (which forward() reads; each element is restored after use).
std::vector<double>
finiteDifference(std::vector<float> &x, const std::vector<float> &dy,
                 const std::function<std::vector<float>()> &forward,
                 float h = 1e-2f);

/// The reference for a backward kernel: the gradient of
/// L(x) = sum_j dy[j] * f(x)[j] by central differences in double (h = 1e-6,
/// leaving errors near 1e-9), where f is the naive double forward reference.
/// Deriving it from the forward keeps the test from repeating the kernel's
/// hand-derived formula.
std::vector<double> referenceGradient(
    const std::vector<float> &x, const std::vector<float> &dy,
    const std::function<std::vector<double>(const std::vector<double> &)> &f);

/// GELU, tanh approximation, in double.
double geluRef(double x);

// The test groups, one file each.
void testMatmulAndLoss(zrt_context *ctx, Checker &check);
void testElementwise(zrt_context *ctx, Checker &check);
void testOptimizer(zrt_context *ctx, Checker &check);
void testNorms(zrt_context *ctx, Checker &check);
void testEmbedding(zrt_context *ctx, Checker &check);
void testRope(zrt_context *ctx, Checker &check);
void testAttention(zrt_context *ctx, Checker &check);
/// The exact sums of --deterministic programs (ZRT_EXACT).
void testExact(zrt_context *ctx, Checker &check);
/// Times attention and its gradient at GPT-2 small's head shape.
void benchAttention(zrt_context *ctx);

} // namespace zrt

#endif // ZRT_TESTS_KERNEL_TESTS_H
