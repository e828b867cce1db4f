//===- collective_tests.cpp - Collectives against known values ------------===//
//
// Run under mpirun at several world sizes. Inputs are small integers, so every
// expected value is exact in float whatever order MPI sums in.
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
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace zrt;

namespace {

// numel == W*S gathers in place of the output; numel < W*S goes through a
// staging buffer and must not write past numel.
bool allGatherOk(zrt_context *ctx, int64_t numel, int64_t s) {
  std::vector<float> shard(s), full(numel + 1, -1.0f);
  for (int64_t i = 0; i < s; ++i)
    shard[i] = 100.0f * ctx->rank + i;
  zrt_all_gather(ctx, shard.data(), full.data(), numel, s);
  bool ok = full[numel] == -1.0f;
  for (int64_t e = 0; e < numel; ++e)
    ok &= full[e] == 100.0f * (e / s) + e % s;
  return ok;
}

void testAllGather(zrt_context *ctx, Checker &check) {
  const int W = ctx->worldSize;
  check.expectTrue("all_gather 5 per rank (no padding)",
                   allGatherOk(ctx, 5 * W, 5));
  int64_t numel = 5 * W - 2, s = shardNumel(numel, W);
  int64_t peakBefore = ctx->ledger.peak[ZRT_MEM_COMM];
  check.expectTrue("all_gather numel 5W-2 (padding dropped)",
                   allGatherOk(ctx, numel, s));
  int64_t stagingPeak = numel < W * s ? W * s * 4 : 0;
  check.expectTrue("all_gather staging charged to comm, then freed",
                   peakBefore == 0 &&
                       ctx->ledger.peak[ZRT_MEM_COMM] == stagingPeak &&
                       ctx->ledger.current[ZRT_MEM_COMM] == 0);
}

// full[e] = (rank + 1) * e on each rank, so the sum is e * W (W + 1) / 2.
bool reduceScatterOk(zrt_context *ctx, int64_t numel, int64_t s) {
  const int W = ctx->worldSize;
  std::vector<float> full(numel), shard(s, -1.0f);
  for (int64_t e = 0; e < numel; ++e)
    full[e] = (ctx->rank + 1.0f) * e;
  zrt_reduce_scatter(ctx, full.data(), shard.data(), numel, s);
  bool ok = true;
  for (int64_t i = 0; i < s; ++i) {
    int64_t e = ctx->rank * s + i;
    float expected = e < numel ? e * W * (W + 1) / 2.0f : 0.0f;
    ok &= shard[i] == expected;
  }
  return ok;
}

void testReduceScatter(zrt_context *ctx, Checker &check) {
  const int W = ctx->worldSize;
  check.expectTrue("reduce_scatter numel 2W (no padding)",
                   reduceScatterOk(ctx, 2 * W, 2));
  int64_t peakBefore = ctx->ledger.peak[ZRT_MEM_COMM];
  // 3W + 1 elements: S = 4 and the last W - 1 elements of the padded buffer
  // are zeros.
  int64_t numel = 3 * W + 1, s = shardNumel(numel, W);
  check.expectTrue("reduce_scatter numel 3W+1 (padded)",
                   reduceScatterOk(ctx, numel, s));
  bool padded = numel < W * s;
  int64_t stagingPeak = padded ? W * s * 4 : 0;
  check.expectTrue("reduce_scatter staging charged to comm, then freed",
                   ctx->ledger.peak[ZRT_MEM_COMM] ==
                           std::max(peakBefore, stagingPeak) &&
                       ctx->ledger.current[ZRT_MEM_COMM] == 0);
}

void testAllReduce(zrt_context *ctx, Checker &check) {
  const int W = ctx->worldSize, n = 7;
  std::vector<float> x(n), y(n, -1.0f);
  for (int i = 0; i < n; ++i)
    x[i] = ctx->rank + 0.5f * i;
  auto expected = [&](int i) { return W * (W - 1) / 2.0f + W * 0.5f * i; };
  zrt_all_reduce(ctx, x.data(), y.data(), n);
  bool outOfPlace = true, inputKept = true, inPlace = true;
  for (int i = 0; i < n; ++i) {
    outOfPlace &= y[i] == expected(i);
    inputKept &= x[i] == ctx->rank + 0.5f * i;
  }
  zrt_all_reduce(ctx, x.data(), x.data(), n);
  for (int i = 0; i < n; ++i)
    inPlace &= x[i] == expected(i);
  check.expectTrue("all_reduce out of place", outOfPlace && inputKept);
  check.expectTrue("all_reduce in place", inPlace);
}

void testRoundTrip(zrt_context *ctx, Checker &check) {
  const int W = ctx->worldSize;
  const int64_t numel = 11, s = shardNumel(numel, W);
  std::vector<float> full(numel), shard(s), gathered(numel, -1.0f);
  for (int64_t e = 0; e < numel; ++e)
    full[e] = e + 1.0f;
  zrt_shard_slice(ctx, full.data(), shard.data(), numel, s);
  zrt_all_gather(ctx, shard.data(), gathered.data(), numel, s);
  bool ok = gathered == full;
  check.expectTrue("shard_slice then all_gather restores the tensor", ok);
}

// Bytes are counted per rank as the ZeRO paper counts volume: W*S for a
// gather or reduce-scatter, 2n for an all-reduce.
void testCounters(zrt_context *ctx, Checker &check) {
  const int64_t W = ctx->worldSize;
  const int64_t rsPadded = W * shardNumel(3 * W + 1, W);
  const int64_t gatherBytes =
      4 * (W * 5 + W * shardNumel(5 * W - 2, W) + W * shardNumel(11, W));
  const int64_t scatterBytes = 4 * (2 * W + rsPadded);
  const int64_t reduceBytes = 4 * (2 * 7 * 2);
  const CollectiveCounters &c = ctx->collectives;
  char detail[160];
  std::snprintf(detail, sizeof(detail),
                "got %lld/%lld/%lld bytes, expected %lld/%lld/%lld",
                (long long)c.bytes[AllGather],
                (long long)c.bytes[ReduceScatter],
                (long long)c.bytes[AllReduce], (long long)gatherBytes,
                (long long)scatterBytes, (long long)reduceBytes);
  check.expectTrue("byte counters",
                   c.bytes[AllGather] == gatherBytes &&
                       c.bytes[ReduceScatter] == scatterBytes &&
                       c.bytes[AllReduce] == reduceBytes,
                   detail);
  check.expectTrue("call counters", c.calls[AllGather] == 3 &&
                                        c.calls[ReduceScatter] == 2 &&
                                        c.calls[AllReduce] == 2);
}

int runFault(zrt_context *ctx, const std::string &fault) {
  if (fault == "bad-label") {
    float logits[2 * 3] = {0}, loss = 0, sum = 1;
    int32_t labels[2] = {1, 7};
    if (ctx->rank == ctx->worldSize - 1)
      zrt_softmax_xent(ctx, logits, labels, &loss, 2, 3, 2.0f);
    zrt_all_reduce(ctx, &sum, &sum, 1);
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
  zrt_context *ctx = createContext(MPI_COMM_WORLD);
  int status;
  if (argc == 2 && std::strncmp(argv[1], "--fault=", 8) == 0) {
    status = runFault(ctx, argv[1] + 8);
  } else {
    Checker check(ctx->comm);
    if (ctx->rank == 0)
      std::printf("world size %d\n", ctx->worldSize);
    testAllGather(ctx, check);
    testReduceScatter(ctx, check);
    testAllReduce(ctx, check);
    testRoundTrip(ctx, check);
    testCounters(ctx, check);
    status = check.finish();
  }
  destroyContext(ctx);
  ZRT_MPI_CHECK(MPI_Finalize());
  return status;
}
