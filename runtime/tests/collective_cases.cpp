//===- collective_cases.cpp - Collective checks shared by the backends ----===//

#include "tests/collective_cases.h"

#include "core/check.h"
#include "core/context.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

namespace zrt {

namespace {

int64_t elementSize(int32_t dtype) { return dtype == ZRT_BF16 ? 2 : 4; }

} // namespace

BufferTensor::BufferTensor(const BufferAdapter &memory, zrt_context *ctx,
                           int32_t dtype, const std::vector<float> &values)
    : memory(memory), ctx(ctx), dtype(dtype), n(values.size()) {
  Tensor host(dtype, values);
  ptr = memory.allocate(ctx, n * elementSize(dtype));
  memory.upload(ctx, ptr, host.data(), n * elementSize(dtype));
}

BufferTensor::BufferTensor(const BufferAdapter &memory, zrt_context *ctx,
                           int32_t dtype, int64_t n)
    : BufferTensor(memory, ctx, dtype, std::vector<float>(n, NAN)) {}

BufferTensor::~BufferTensor() { memory.release(ctx, ptr); }

std::vector<float> BufferTensor::values() const {
  Tensor host(dtype, n);
  memory.download(ctx, host.data(), ptr, n * elementSize(dtype));
  return host.values();
}

namespace {

/// The checks of one dtype on one context.
struct Suite {
  const BufferAdapter &memory;
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
  BufferTensor shardT(t.memory, t.ctx, t.dtype, shard),
      fullT(t.memory, t.ctx, t.dtype, numel + 1);
  zrt_all_gather(t.ctx, t.dtype, shardT.data(), fullT.data(), numel, s, "case");
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
  BufferTensor fullT(t.memory, t.ctx, t.dtype, full),
      shardT(t.memory, t.ctx, t.dtype, s);
  zrt_reduce_scatter(t.ctx, t.dtype, fullT.data(), shardT.data(), numel, s, "case");
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
  BufferTensor xT(t.memory, t.ctx, t.dtype, x), yT(t.memory, t.ctx, t.dtype, n);
  zrt_all_reduce(t.ctx, t.dtype, xT.data(), yT.data(), n, "case");
  auto y = yT.values();
  bool outOfPlace = xT.values() == x;
  for (int i = 0; i < n; ++i)
    outOfPlace &= y[i] == expected(i);
  zrt_all_reduce(t.ctx, t.dtype, xT.data(), xT.data(), n, "case");
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
  BufferTensor fullT(t.memory, t.ctx, t.dtype, full),
      shardT(t.memory, t.ctx, t.dtype, s),
      gatheredT(t.memory, t.ctx, t.dtype, numel);
  zrt_shard_slice(t.ctx, t.dtype, fullT.data(), shardT.data(), numel, s);
  zrt_all_gather(t.ctx, t.dtype, shardT.data(), gatheredT.data(), numel, s, "case");
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
  t.expectTrue(t.memory.bytesCheckName(),
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
void testBf16Rounding(Suite &t) {
  const int W = t.ctx->worldSize;
  float mine = t.ctx->rank == 0   ? 1.0f
               : t.ctx->rank == 1 ? std::ldexp(1.0f, -8) + std::ldexp(1.0f, -15)
                                  : 0.0f;
  BufferTensor xT(t.memory, t.ctx, ZRT_BF16, std::vector<float>{mine});
  zrt_all_reduce(t.ctx, ZRT_BF16, xT.data(), xT.data(), 1, "case");
  float expected = W > 1 ? 1.0f + std::ldexp(1.0f, -7) : 1.0f;
  t.check.expectTrue(
      "all_reduce bf16 sums pairs in float32, rounds to nearest even",
      xT.values()[0] == expected);
}

//===--- Asynchronous collectives -----------------------------------------===//

/// One collective of the mixed batch: its kind, dtype, sizes and input.
struct AsyncCase {
  CollectiveKind kind;
  int32_t dtype;
  int64_t numel; // all_reduce: n
  int64_t shard; // S (unused by all_reduce)
  bool inPlace;  // all_reduce only
  std::vector<float> input;

  int64_t outputNumel() const {
    return kind == AllGather ? numel : kind == ReduceScatter ? shard : numel;
  }
  int64_t countedBytes(int W) const {
    int64_t elements = kind == AllReduce ? 2 * numel : W * shard;
    return elements * elementSize(dtype);
  }
  /// Bytes of padded staging the collective needs while it runs.
  int64_t stagingBytes(int W) const {
    if (kind == AllReduce || numel == W * shard || W == 1)
      return 0;
    return W * shard * elementSize(dtype);
  }
};

/// Mixed kinds and dtypes, padded and not, in place and not; inputs are
/// small integers and halves, exact in bf16 whatever the summation order.
std::vector<AsyncCase> asyncCases(int rank, int W) {
  std::vector<AsyncCase> cases;
  auto add = [&](CollectiveKind kind, int32_t dtype, int64_t numel,
                 bool inPlace = false) {
    int64_t shard = shardNumel(numel, W);
    int64_t inputs = kind == AllGather ? shard : numel;
    std::vector<float> input(inputs);
    for (int64_t i = 0; i < inputs; ++i)
      input[i] = kind == AllGather ? 16.0f * rank + i
                                   : (rank + 1.0f) * (i % 9) + 0.5f * rank;
    cases.push_back({kind, dtype, numel, shard, inPlace, input});
  };
  add(AllGather, ZRT_F32, 5 * W - 2);
  add(ReduceScatter, ZRT_BF16, 3 * W + 1);
  add(AllReduce, ZRT_F32, 7);
  add(AllGather, ZRT_BF16, 5 * W);
  add(AllReduce, ZRT_BF16, 9, /*inPlace=*/true);
  add(ReduceScatter, ZRT_F32, 2 * W);
  add(AllReduce, ZRT_F32, 1000, /*inPlace=*/true);
  add(AllGather, ZRT_F32, 40 * W + 3);
  return cases;
}

/// Input and output tensors of one case; the result is `out`, or `in` when
/// the case runs in place.
struct AsyncBuffers {
  BufferTensor in, out;
  AsyncBuffers(const BufferAdapter &memory, zrt_context *ctx,
               const AsyncCase &c)
      : in(memory, ctx, c.dtype, c.input),
        out(memory, ctx, c.dtype, c.outputNumel()) {}
  std::vector<float> result(const AsyncCase &c) const {
    return c.inPlace ? in.values() : out.values();
  }
};

int64_t startCase(zrt_context *ctx, const AsyncCase &c, AsyncBuffers &b) {
  void *out = c.inPlace ? b.in.data() : b.out.data();
  switch (c.kind) {
  case AllGather:
    return zrt_all_gather_start(ctx, c.dtype, b.in.data(), out, c.numel,
                                c.shard, "case");
  case ReduceScatter:
    return zrt_reduce_scatter_start(ctx, c.dtype, b.in.data(), out, c.numel,
                                    c.shard, "case");
  default:
    return zrt_all_reduce_start(ctx, c.dtype, b.in.data(), out, c.numel, "case");
  }
}

void runBlocking(zrt_context *ctx, const AsyncCase &c, AsyncBuffers &b) {
  void *out = c.inPlace ? b.in.data() : b.out.data();
  if (c.kind == AllGather)
    zrt_all_gather(ctx, c.dtype, b.in.data(), out, c.numel, c.shard, "case");
  else if (c.kind == ReduceScatter)
    zrt_reduce_scatter(ctx, c.dtype, b.in.data(), out, c.numel, c.shard, "case");
  else
    zrt_all_reduce(ctx, c.dtype, b.in.data(), out, c.numel, "case");
}

/// Starts every case on a fresh context, checks what was counted before any
/// wait, waits in `order` and compares each result with `expected`.
void checkAsyncRound(Checker &check, const BufferAdapter &memory,
                     const std::vector<AsyncCase> &cases,
                     const std::vector<std::vector<float>> &expected,
                     const std::vector<size_t> &order, const char *how) {
  zrt_context *ctx = memory.makeContext();
  const int W = ctx->worldSize;
  bool increasing = true, countedAtStart = false, same = true, ledger = false;
  {
    // Scoped: the buffers go back to the context before it is destroyed.
    std::vector<std::unique_ptr<AsyncBuffers>> buffers;
    for (const AsyncCase &c : cases)
      buffers.push_back(std::make_unique<AsyncBuffers>(memory, ctx, c));
    std::vector<int64_t> handles;
    for (size_t i = 0; i < cases.size(); ++i)
      handles.push_back(startCase(ctx, cases[i], *buffers[i]));
    // Counted at start: the counters are complete before the first wait.
    std::array<int64_t, NumCollectiveKinds> bytes{}, calls{};
    int64_t staging = 0;
    for (const AsyncCase &c : cases) {
      bytes[c.kind] += c.countedBytes(W);
      calls[c.kind] += 1;
      staging += c.stagingBytes(W);
    }
    countedAtStart =
        ctx->collectives.bytes == bytes && ctx->collectives.calls == calls;
    increasing = handles[0] > 0;
    for (size_t i = 1; i < handles.size(); ++i)
      increasing &= handles[i] > handles[i - 1];
    for (size_t i : order)
      zrt_wait(ctx, handles[i]);
    for (size_t i = 0; i < cases.size(); ++i)
      same &= buffers[i]->result(cases[i]) == expected[i];
    // Staging is charged from each start to its wait: all of it is live
    // while every case is in flight, and nothing is left after the waits.
    ledger = ctx->ledger.peak[ZRT_MEM_COMM] == staging &&
             ctx->ledger.current[ZRT_MEM_COMM] == 0;
  }
  destroyContext(ctx);
  std::string prefix = std::string("async ") + how + ": ";
  check.expectTrue(prefix + "handles > 0, increasing", increasing);
  check.expectTrue(prefix + "results equal the blocking forms", same);
  check.expectTrue(prefix + "bytes and calls counted at start", countedAtStart);
  check.expectTrue(prefix + "staging charged from start to wait, then freed",
                   ledger);
}

void testAsync(Checker &check, const BufferAdapter &memory) {
  int rank, W;
  ZRT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  ZRT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &W));
  std::vector<AsyncCase> cases = asyncCases(rank, W);
  zrt_context *ctx = memory.makeContext();
  std::vector<std::vector<float>> expected;
  for (const AsyncCase &c : cases) {
    AsyncBuffers b(memory, ctx, c);
    runBlocking(ctx, c, b);
    expected.push_back(b.result(c));
  }
  destroyContext(ctx);
  std::vector<size_t> inOrder(cases.size()), reversed, shuffled;
  for (size_t i = 0; i < cases.size(); ++i)
    inOrder[i] = i;
  reversed.assign(inOrder.rbegin(), inOrder.rend());
  // A fixed permutation: the same on every rank, neither sorted nor reversed.
  for (size_t i = 0; i < cases.size(); ++i)
    shuffled.push_back((i * 3 + 5) % cases.size());
  checkAsyncRound(check, memory, cases, expected, inOrder,
                  "8 outstanding, waited in order");
  checkAsyncRound(check, memory, cases, expected, reversed,
                  "waited in reverse");
  checkAsyncRound(check, memory, cases, expected, shuffled,
                  "waited out of order");
}

} // namespace

void runCollectiveCases(Checker &check, const BufferAdapter &memory) {
  int worldSize;
  ZRT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &worldSize));
  if (check.rank() == 0)
    std::printf("world size %d\n", worldSize);
  for (int32_t dtype : kDtypes) {
    zrt_context *ctx = memory.makeContext();
    Suite suite{memory, ctx, check, dtype};
    testAllGather(suite);
    testReduceScatter(suite);
    testAllReduce(suite);
    testRoundTrip(suite);
    testCounters(suite);
    if (dtype == ZRT_BF16)
      testBf16Rounding(suite);
    destroyContext(ctx);
  }
  testAsync(check, memory);
}

} // namespace zrt
