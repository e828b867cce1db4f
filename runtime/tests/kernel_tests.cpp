//===- kernel_tests.cpp - Every CPU kernel against a naive reference ------===//
//
// Also runs the checks of the allocator, init and data (core_checks.cpp).
// Single process, no MPI: kernels only need a context for its rank, so the
// tests use a local context and run without mpirun. References compute in
// double; tolerances are relative for values above 1, absolute below. The
// kernels' tests live in kernel_tests_*.cpp, one group per file.
//
// `zrt-kernel-tests --fault=NAME` instead triggers one error path (bad-label,
// bad-id, bad-dtype, exact-dtype (a float kernel given ZRT_EXACT),
// bad-epilogue, gelu-without-pre-activation, huge-alloc,
// bad-free, outside-arena, arena-overlap, unfilled-overlap) so lit can
// check the message and the exit code; `--bench-attention` times attention at a GPT-2 head shape.
//
//===----------------------------------------------------------------------===//

#include "tests/kernel_tests.h"
#include "tests/core_checks.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace zrt {

std::vector<double>
finiteDifference(std::vector<float> &x, const std::vector<float> &dy,
                 const std::function<std::vector<float>()> &forward, float h) {
  auto objective = [&]() {
    std::vector<float> y = forward();
    double sum = 0.0;
    for (size_t j = 0; j < y.size(); ++j)
      sum += (double)dy[j] * y[j];
    return sum;
  };
  std::vector<double> grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float saved = x[i];
    float plus = saved + h, minus = saved - h;
    x[i] = plus;
    double lPlus = objective();
    x[i] = minus;
    double lMinus = objective();
    x[i] = saved;
    // Divide by the step actually taken, which float rounding may change.
    grad[i] = (lPlus - lMinus) / ((double)plus - minus);
  }
  return grad;
}

std::vector<double> referenceGradient(
    const std::vector<float> &x, const std::vector<float> &dy,
    const std::function<std::vector<double>(const std::vector<double> &)> &f) {
  const double h = 1e-6;
  std::vector<double> point(x.begin(), x.end()), grad(x.size());
  auto objective = [&]() {
    std::vector<double> y = f(point);
    double sum = 0.0;
    for (size_t j = 0; j < y.size(); ++j)
      sum += dy[j] * y[j];
    return sum;
  };
  for (size_t i = 0; i < x.size(); ++i) {
    point[i] = x[i] + h;
    double lPlus = objective();
    point[i] = x[i] - h;
    double lMinus = objective();
    point[i] = x[i];
    grad[i] = (lPlus - lMinus) / (2 * h);
  }
  return grad;
}

} // namespace zrt

using namespace zrt;

static int runFault(const std::string &fault) {
  zrt_context *ctx = createLocalContext();
  if (fault == "bad-label") {
    std::vector<float> logits(3 * 4, 0.0f), loss(1);
    std::vector<int32_t> labels = {0, 3, 4};
    zrt_softmax_xent(ctx, ZRT_F32, logits.data(), labels.data(), loss.data(), 3,
                     4, 3.0f);
  } else if (fault == "bad-id") {
    std::vector<float> table(5 * 2), out(3 * 2);
    std::vector<int32_t> ids = {0, 4, 5};
    zrt_embedding(ctx, ZRT_BF16, ids.data(), table.data(), out.data(), 3, 5, 2);
  } else if (fault == "bad-dtype") {
    float x[2] = {1, 2};
    zrt_gelu(ctx, 7, x, x, 2);
  } else if (fault == "bad-epilogue") {
    float x[4] = {1, 2, 3, 4};
    zrt_matmul_bias(ctx, ZRT_F32, x, x, x, x, nullptr, 2, 2, 2, 0, 0, 5);
  } else if (fault == "gelu-without-pre-activation") {
    float x[4] = {1, 2, 3, 4};
    zrt_matmul_bias(ctx, ZRT_F32, x, x, x, x, nullptr, 2, 2, 2, 0, 0,
                    ZRT_EPILOGUE_BIAS_GELU);
  } else if (fault == "exact-dtype") {
    float x[2] = {1, 2};
    zrt_gelu(ctx, ZRT_EXACT, x, x, 2);
  } else if (fault == "huge-alloc") {
    zrt_alloc(ctx, int64_t(1) << 60, ZRT_MEM_ACTIVATION);
  } else if (fault == "bad-free") {
    int notAllocated;
    zrt_free(ctx, &notAllocated);
  } else if (fault == "outside-arena") {
    zrt_declare_arena(ctx, ZRT_MEM_COMM, 256);
    zrt_alloc_in_arena(ctx, 128, ZRT_MEM_COMM, 192);
  } else if (fault == "arena-overlap") {
    zrt_declare_arena(ctx, ZRT_MEM_COMM, 256);
    zrt_alloc_in_arena(ctx, 64, ZRT_MEM_COMM, 64);
    zrt_alloc_in_arena(ctx, 64, ZRT_MEM_COMM, 64);
  } else if (fault == "unfilled-overlap") {
    zrt_declare_arena(ctx, ZRT_MEM_COMM, 256);
    zrt_alloc_in_arena(ctx, 64, ZRT_MEM_COMM, 64);
    zrt_alloc_in_arena_unfilled(ctx, 64, ZRT_MEM_COMM, 64);
  } else {
    std::fprintf(stderr, "unknown fault '%s'\n", fault.c_str());
    return 2;
  }
  std::printf("fault %s did not stop the program\n", fault.c_str());
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && std::strncmp(argv[1], "--fault=", 8) == 0)
    return runFault(argv[1] + 8);
  zrt_context *ctx = createLocalContext();
  if (argc == 2 && std::strcmp(argv[1], "--bench-attention") == 0) {
    benchAttention(ctx);
    destroyContext(ctx);
    return 0;
  }
  Checker check;
  testMatmulAndLoss(ctx, check);
  testElementwise(ctx, check);
  testOptimizer(ctx, check);
  testNorms(ctx, check);
  testEmbedding(ctx, check);
  testRope(ctx, check);
  testAttention(ctx, check);
  testExact(ctx, check);
  destroyContext(ctx);
  checkAllocator(check);
  checkSharedArena(check);
  checkOffloadEntries(check);
  checkInitAndData(check);
  return check.finish();
}
