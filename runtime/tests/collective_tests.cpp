//===- collective_tests.cpp - Collectives against known values ------------===//
//
// Run under mpirun at several world sizes, once per dtype (f32, bf16), each
// on a context of its own so that its byte counters can be checked against
// its element size. Inputs are small integers and halves (below 256, where
// bf16 still holds every integer), so every expected value is exact in both
// dtypes whatever order MPI sums in.
//
// `--fault=bad-label` makes the last rank hit a bad label while the others
// wait in an all-reduce (the job must abort, not hang); `--fault=mpi-error`
// makes an MPI call fail so the check macro's report can be inspected.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"
#include "tests/checker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace zrt;

namespace {

int64_t elementSize(int32_t dtype) { return dtype == ZRT_BF16 ? 2 : 4; }

/// The checks of one dtype on one context.
struct Suite {
  zrt_context *ctx;
  Checker &check;
  int32_t dtype;

  void expectTrue(const std::string &name, bool ok,
                  const std::string &detail = "") {
    // The dtype goes after the first word, the collective's name.
    size_t space = name.find(' ');
    check.expectTrue(name.substr(0, space) + " " + dtypeName(dtype) +
                         name.substr(space),
                     ok, detail);
  }
};

// numel == W*S gathers in place of the output; numel < W*S goes through a
// staging buffer and must not write past numel.
bool allGatherOk(Suite &t, int64_t numel, int64_t s) {
  std::vector<float> shard(s);
  for (int64_t i = 0; i < s; ++i)
    shard[i] = 16.0f * t.ctx->rank + i;
  Tensor shardT(t.dtype, shard), fullT(t.dtype, numel + 1);
  zrt_all_gather(t.ctx, t.dtype, shardT.data(), fullT.data(), numel, s);
  auto full = fullT.values();
  bool ok = std::isnan(full[numel]);
  for (int64_t e = 0; e < numel; ++e)
    ok &= full[e] == 16.0f * (e / s) + e % s;
  return ok;
}

void testAllGather(Suite &t) {
  const int W = t.ctx->worldSize;
  t.expectTrue("all_gather 5 per rank (no padding)", allGatherOk(t, 5 * W, 5));
  int64_t numel = 5 * W - 2, s = shardNumel(numel, W);
  int64_t peakBefore = t.ctx->ledger.peak[ZRT_MEM_COMM];
  t.expectTrue("all_gather numel 5W-2 (padding dropped)",
               allGatherOk(t, numel, s));
  int64_t stagingPeak = numel < W * s ? W * s * elementSize(t.dtype) : 0;
  t.expectTrue("all_gather staging charged to comm, then freed",
               peakBefore == 0 &&
                   t.ctx->ledger.peak[ZRT_MEM_COMM] == stagingPeak &&
                   t.ctx->ledger.current[ZRT_MEM_COMM] == 0);
}

// full[e] = (rank + 1) * e on each rank, so the sum is e * W (W + 1) / 2.
bool reduceScatterOk(Suite &t, int64_t numel, int64_t s) {
  const int W = t.ctx->worldSize;
  std::vector<float> full(numel);
  for (int64_t e = 0; e < numel; ++e)
    full[e] = (t.ctx->rank + 1.0f) * e;
  Tensor fullT(t.dtype, full), shardT(t.dtype, s);
  zrt_reduce_scatter(t.ctx, t.dtype, fullT.data(), shardT.data(), numel, s);
  auto shard = shardT.values();
  bool ok = true;
  for (int64_t i = 0; i < s; ++i) {
    int64_t e = t.ctx->rank * s + i;
    float expected = e < numel ? e * W * (W + 1) / 2.0f : 0.0f;
    ok &= shard[i] == expected;
  }
  return ok;
}

void testReduceScatter(Suite &t) {
  const int W = t.ctx->worldSize;
  t.expectTrue("reduce_scatter numel 2W (no padding)",
               reduceScatterOk(t, 2 * W, 2));
  int64_t peakBefore = t.ctx->ledger.peak[ZRT_MEM_COMM];
  // 3W + 1 elements: S = 4 and the last W - 1 elements of the padded buffer
  // are zeros.
  int64_t numel = 3 * W + 1, s = shardNumel(numel, W);
  t.expectTrue("reduce_scatter numel 3W+1 (padded)",
               reduceScatterOk(t, numel, s));
  int64_t stagingPeak = numel < W * s ? W * s * elementSize(t.dtype) : 0;
  t.expectTrue("reduce_scatter staging charged to comm, then freed",
               t.ctx->ledger.peak[ZRT_MEM_COMM] ==
                       std::max(peakBefore, stagingPeak) &&
                   t.ctx->ledger.current[ZRT_MEM_COMM] == 0);
}

void testAllReduce(Suite &t) {
  const int W = t.ctx->worldSize, n = 7;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = t.ctx->rank + 0.5f * i;
  auto expected = [&](int i) { return W * (W - 1) / 2.0f + W * 0.5f * i; };
  Tensor xT(t.dtype, x), yT(t.dtype, n);
  zrt_all_reduce(t.ctx, t.dtype, xT.data(), yT.data(), n);
  auto y = yT.values();
  bool outOfPlace = xT.values() == x;
  for (int i = 0; i < n; ++i)
    outOfPlace &= y[i] == expected(i);
  zrt_all_reduce(t.ctx, t.dtype, xT.data(), xT.data(), n);
  auto inPlace = xT.values();
  bool inPlaceOk = true;
  for (int i = 0; i < n; ++i)
    inPlaceOk &= inPlace[i] == expected(i);
  t.expectTrue("all_reduce out of place", outOfPlace);
  t.expectTrue("all_reduce in place", inPlaceOk);
}

void testRoundTrip(Suite &t) {
  const int W = t.ctx->worldSize;
  const int64_t numel = 11, s = shardNumel(numel, W);
  std::vector<float> full(numel);
  for (int64_t e = 0; e < numel; ++e)
    full[e] = e + 1.0f;
  Tensor fullT(t.dtype, full), shardT(t.dtype, s), gatheredT(t.dtype, numel);
  zrt_shard_slice(t.ctx, t.dtype, fullT.data(), shardT.data(), numel, s);
  zrt_all_gather(t.ctx, t.dtype, shardT.data(), gatheredT.data(), numel, s);
  t.expectTrue("shard_slice+all_gather restores the tensor",
               gatheredT.values() == full);
}

// Bytes are counted per rank as the ZeRO paper counts volume: W*S elements
// for a gather or reduce-scatter, 2n for an all-reduce, times the element
// size of the dtype.
void testCounters(Suite &t) {
  const int64_t W = t.ctx->worldSize, size = elementSize(t.dtype);
  const int64_t rsPadded = W * shardNumel(3 * W + 1, W);
  const int64_t gatherBytes =
      size * (W * 5 + W * shardNumel(5 * W - 2, W) + W * shardNumel(11, W));
  const int64_t scatterBytes = size * (2 * W + rsPadded);
  const int64_t reduceBytes = size * (2 * 7 * 2);
  const CollectiveCounters &c = t.ctx->collectives;
  char detail[160];
  std::snprintf(detail, sizeof(detail),
                "got %lld/%lld/%lld bytes, expected %lld/%lld/%lld",
                (long long)c.bytes[AllGather],
                (long long)c.bytes[ReduceScatter],
                (long long)c.bytes[AllReduce], (long long)gatherBytes,
                (long long)scatterBytes, (long long)reduceBytes);
  t.expectTrue("counters (bytes)",
               c.bytes[AllGather] == gatherBytes &&
                   c.bytes[ReduceScatter] == scatterBytes &&
                   c.bytes[AllReduce] == reduceBytes,
               detail);
  t.expectTrue("counters (calls)", c.calls[AllGather] == 3 &&
                                       c.calls[ReduceScatter] == 2 &&
                                       c.calls[AllReduce] == 2);
}

// Rank 0 holds 1, rank 1 holds 2^-8 + 2^-15, other ranks 0: whatever the
// order, one sum rounds (1 + 2^-8 + 2^-15 lies just above the midpoint of
// 1 and 1 + 2^-7) and the rest add zeros exactly. Round-to-nearest gives
// 1 + 2^-7; truncating the float sum, or adding the bit patterns as
// integers, would not.
void testBf16Rounding(zrt_context *ctx, Checker &check) {
  const int W = ctx->worldSize;
  float mine = ctx->rank == 0   ? 1.0f
               : ctx->rank == 1 ? std::ldexp(1.0f, -8) + std::ldexp(1.0f, -15)
                                : 0.0f;
  Tensor xT(ZRT_BF16, std::vector<float>{mine});
  zrt_all_reduce(ctx, ZRT_BF16, xT.data(), xT.data(), 1);
  float expected = W > 1 ? 1.0f + std::ldexp(1.0f, -7) : 1.0f;
  check.expectTrue(
      "all_reduce bf16 sums pairs in float32, rounds to nearest even",
      xT.values()[0] == expected);
}

int runFault(zrt_context *ctx, const std::string &fault) {
  if (fault == "bad-label") {
    float logits[2 * 3] = {0}, loss = 0, sum = 1;
    int32_t labels[2] = {1, 7};
    if (ctx->rank == ctx->worldSize - 1)
      zrt_softmax_xent(ctx, ZRT_F32, logits, labels, &loss, 2, 3, 2.0f);
    zrt_all_reduce(ctx, ZRT_F32, &sum, &sum, 1);
  } else if (fault == "mpi-error") {
    float value = 0;
    ZRT_MPI_CHECK(MPI_Bcast(&value, -1, MPI_FLOAT, 0, ctx->comm));
  } else {
    std::fprintf(stderr, "unknown fault '%s'\n", fault.c_str());
    return 2;
  }
  std::printf("fault %s did not stop the job\n", fault.c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  ZRT_MPI_CHECK(MPI_Init(&argc, &argv));
  ZRT_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int status;
  if (argc == 2 && std::strncmp(argv[1], "--fault=", 8) == 0) {
    zrt_context *ctx = createContext(MPI_COMM_WORLD);
    status = runFault(ctx, argv[1] + 8);
    destroyContext(ctx);
  } else {
    Checker check(MPI_COMM_WORLD);
    int worldSize;
    ZRT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &worldSize));
    if (check.rank() == 0)
      std::printf("world size %d\n", worldSize);
    for (int32_t dtype : kDtypes) {
      zrt_context *ctx = createContext(MPI_COMM_WORLD);
      Suite suite{ctx, check, dtype};
      testAllGather(suite);
      testReduceScatter(suite);
      testAllReduce(suite);
      testRoundTrip(suite);
      testCounters(suite);
      if (dtype == ZRT_BF16)
        testBf16Rounding(ctx, check);
      destroyContext(ctx);
    }
    status = check.finish();
  }
  ZRT_MPI_CHECK(MPI_Finalize());
  return status;
}
