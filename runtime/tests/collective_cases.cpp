//===- collective_cases.cpp - Collective checks shared by the backends ----===//

#include "tests/collective_cases.h"

#include "core/check.h"
#include "core/context.h"
#include "core/program.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
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
  zrt_all_gather(t.ctx, ZRT_GROUP_WORLD, t.dtype, shardT.data(), fullT.data(),
                 numel, s, "case");
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
  zrt_reduce_scatter(t.ctx, ZRT_GROUP_WORLD, t.dtype, fullT.data(),
                     shardT.data(), numel, s, "case");
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
  zrt_all_reduce(t.ctx, ZRT_GROUP_WORLD, t.dtype, xT.data(), yT.data(), n,
                 "case");
  auto y = yT.values();
  bool outOfPlace = xT.values() == x;
  for (int i = 0; i < n; ++i)
    outOfPlace &= y[i] == expected(i);
  zrt_all_reduce(t.ctx, ZRT_GROUP_WORLD, t.dtype, xT.data(), xT.data(), n,
                 "case");
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
  zrt_all_gather(t.ctx, ZRT_GROUP_WORLD, t.dtype, shardT.data(),
                 gatheredT.data(), numel, s, "case");
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
  zrt_all_reduce(t.ctx, ZRT_GROUP_WORLD, ZRT_BF16, xT.data(), xT.data(), 1,
                 "case");
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
    return zrt_all_gather_start(ctx, ZRT_GROUP_WORLD, c.dtype, b.in.data(), out,
                                c.numel, c.shard, "case");
  case ReduceScatter:
    return zrt_reduce_scatter_start(ctx, ZRT_GROUP_WORLD, c.dtype, b.in.data(),
                                    out, c.numel, c.shard, "case");
  default:
    return zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, c.dtype, b.in.data(), out,
                                c.numel, "case");
  }
}

void runBlocking(zrt_context *ctx, const AsyncCase &c, AsyncBuffers &b) {
  void *out = c.inPlace ? b.in.data() : b.out.data();
  if (c.kind == AllGather)
    zrt_all_gather(ctx, ZRT_GROUP_WORLD, c.dtype, b.in.data(), out, c.numel,
                   c.shard, "case");
  else if (c.kind == ReduceScatter)
    zrt_reduce_scatter(ctx, ZRT_GROUP_WORLD, c.dtype, b.in.data(), out, c.numel,
                       c.shard, "case");
  else
    zrt_all_reduce(ctx, ZRT_GROUP_WORLD, c.dtype, b.in.data(), out, c.numel,
                   "case");
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

//===--- Groups (hybrid sharding) -----------------------------------------===//

/// Rank `rank`'s input to case `id`: n random multiples of 1/8 in [-4, 4).
/// Distinct on every rank, and every sum of up to 8 of them is exact in
/// float32 and in bf16, so a result equals the sum made here whatever the
/// order the transport adds in, and a rank of another group or a shard of
/// another rank shows.
std::vector<float> rankInput(int rank, int id, int64_t n) {
  std::mt19937 rng(1000003u * id + 7919u * rank + 17u);
  std::uniform_int_distribution<int> eighths(-32, 31);
  std::vector<float> x(n);
  for (float &v : x)
    v = eighths(rng) / 8.0f;
  return x;
}

/// The elementwise sum over `members` of their inputs to case `id`.
std::vector<float> memberSum(const std::vector<int> &members, int id,
                             int64_t n) {
  std::vector<float> sum(n, 0.0f);
  for (int member : members) {
    std::vector<float> x = rankInput(member, id, n);
    for (int64_t i = 0; i < n; ++i)
      sum[i] += x[i];
  }
  return sum;
}

/// One collective of the group cases: its inputs (by case id), its sizes
/// and what it must give this rank.
struct GroupCase {
  CollectiveKind kind;
  int32_t group;
  int id;
  int64_t numel; // all_reduce: n
  int64_t shard; // S (unused by all_reduce)
  std::vector<float> input, expected;
};

/// The cases over `group` of a rank at `position` among `members`:
/// all_gather and reduce_scatter padded (when the group has more than one
/// rank), all_reduce of 7.
std::vector<GroupCase> groupCases(int rank, const std::vector<int> &members,
                                  int32_t group) {
  const int64_t W = members.size();
  const int64_t me =
      std::find(members.begin(), members.end(), rank) - members.begin();
  std::vector<GroupCase> cases;
  int id = 10 * group;
  {
    GroupCase c{AllGather, group, ++id, 5 * W - 2, 0, {}, {}};
    c.shard = shardNumel(c.numel, W);
    c.input = rankInput(rank, c.id, c.shard);
    for (int64_t e = 0; e < c.numel; ++e)
      c.expected.push_back(
          rankInput(members[e / c.shard], c.id, c.shard)[e % c.shard]);
    cases.push_back(c);
  }
  {
    GroupCase c{ReduceScatter, group, ++id, 3 * W + 1, 0, {}, {}};
    c.shard = shardNumel(c.numel, W);
    c.input = rankInput(rank, c.id, c.numel);
    std::vector<float> sum = memberSum(members, c.id, c.numel);
    for (int64_t i = 0; i < c.shard; ++i) {
      int64_t e = me * c.shard + i;
      c.expected.push_back(e < c.numel ? sum[e] : 0.0f);
    }
    cases.push_back(c);
  }
  {
    GroupCase c{AllReduce, group, ++id, 7, 0, {}, {}};
    c.input = rankInput(rank, c.id, c.numel);
    c.expected = memberSum(members, c.id, c.numel);
    cases.push_back(c);
  }
  return cases;
}

/// Bytes the ledger counts for `c` in `dtype` over a group of W ranks.
int64_t groupCaseBytes(const GroupCase &c, int64_t W, int32_t dtype) {
  return zrt_traffic_elements((zrt_collective)c.kind, c.numel, c.shard, W) *
         elementSize(dtype);
}

int64_t startGroupCase(zrt_context *ctx, int32_t dtype, const GroupCase &c,
                       BufferTensor &in, BufferTensor &out) {
  switch (c.kind) {
  case AllGather:
    return zrt_all_gather_start(ctx, c.group, dtype, in.data(), out.data(),
                                c.numel, c.shard, "group case");
  case ReduceScatter:
    return zrt_reduce_scatter_start(ctx, c.group, dtype, in.data(), out.data(),
                                    c.numel, c.shard, "group case");
  default:
    return zrt_all_reduce_start(ctx, c.group, dtype, in.data(), out.data(),
                                c.numel, "group case");
  }
}

void runBlockingGroupCase(zrt_context *ctx, int32_t dtype, const GroupCase &c,
                          BufferTensor &in, BufferTensor &out) {
  if (c.kind == AllGather)
    zrt_all_gather(ctx, c.group, dtype, in.data(), out.data(), c.numel, c.shard,
                   "group case");
  else if (c.kind == ReduceScatter)
    zrt_reduce_scatter(ctx, c.group, dtype, in.data(), out.data(), c.numel,
                       c.shard, "group case");
  else
    zrt_all_reduce(ctx, c.group, dtype, in.data(), out.data(), c.numel,
                   "group case");
}

/// "over the shard group (2 ranks)".
std::string overGroup(int32_t group, int64_t size) {
  return std::string("over the ") + groupName(group) + " group (" +
         std::to_string(size) + (size == 1 ? " rank)" : " ranks)");
}

/// Every case over every group in `dtype` on one context: blocking, then
/// the shard and replica cases started together and waited in reverse;
/// then the bytes and calls counted per group and per kind.
void checkGroupDtype(Checker &check, const BufferAdapter &memory,
                     int64_t shardGroupSize, int32_t dtype) {
  zrt_context *ctx = memory.makeContext(shardGroupSize);
  const int rank = ctx->rank, W = ctx->worldSize;
  const std::string type = dtypeName(dtype);
  std::array<int64_t, ZRT_NUM_GROUPS> bytes{}, calls{};
  std::array<int64_t, NumCollectiveKinds> kindBytes{};
  std::vector<GroupCase> started;
  for (int32_t group = 0; group < ZRT_NUM_GROUPS; ++group) {
    std::vector<int> members = groupMembers(rank, W, shardGroupSize, group);
    const int64_t size = members.size();
    const CommGroup &g = ctx->groups[group];
    int64_t me =
        std::find(members.begin(), members.end(), rank) - members.begin();
    check.expectTrue(std::string("groups: the ") + groupName(group) +
                         " group has this rank's ranks and place (" + type +
                         " context)",
                     g.size == size && g.rank == me);
    for (const GroupCase &c : groupCases(rank, members, group)) {
      BufferTensor in(memory, ctx, dtype, c.input),
          out(memory, ctx, dtype, (int64_t)c.expected.size() + 1);
      runBlockingGroupCase(ctx, dtype, c, in, out);
      std::vector<float> got = out.values();
      // One element past the output: a collective must not write it.
      bool ok = std::isnan(got.back());
      got.pop_back();
      ok &= got == representable(c.expected, dtype);
      check.expectTrue(std::string(collectiveName(c.kind)) + " " + type + " " +
                           overGroup(group, size) + " of random data",
                       ok);
      bytes[group] += groupCaseBytes(c, size, dtype);
      kindBytes[c.kind] += groupCaseBytes(c, size, dtype);
      calls[group] += 1;
      if (group != ZRT_GROUP_WORLD)
        started.push_back(c);
    }
  }
  // The shard and replica cases started back to back (mixed groups in
  // flight at once on one communication thread or stream), waited in
  // reverse.
  bool asyncOk = true;
  {
    std::vector<std::unique_ptr<BufferTensor>> ins, outs;
    std::vector<int64_t> handles;
    for (const GroupCase &c : started) {
      ins.push_back(
          std::make_unique<BufferTensor>(memory, ctx, dtype, c.input));
      outs.push_back(std::make_unique<BufferTensor>(
          memory, ctx, dtype, (int64_t)c.expected.size()));
      handles.push_back(
          startGroupCase(ctx, dtype, c, *ins.back(), *outs.back()));
      int64_t size = groupMembers(rank, W, shardGroupSize, c.group).size();
      bytes[c.group] += groupCaseBytes(c, size, dtype);
      kindBytes[c.kind] += groupCaseBytes(c, size, dtype);
      calls[c.group] += 1;
    }
    for (size_t i = handles.size(); i-- > 0;)
      zrt_wait(ctx, handles[i]);
    for (size_t i = 0; i < started.size(); ++i)
      asyncOk &= outs[i]->values() == representable(started[i].expected, dtype);
  }
  check.expectTrue("groups: " + type +
                       " shard and replica collectives "
                       "started together, waited in reverse, equal the sums",
                   asyncOk);
  const CollectiveCounters &c = ctx->collectives;
  char detail[200];
  std::snprintf(detail, sizeof(detail),
                "got %lld/%lld/%lld bytes in %lld/%lld/%lld calls, expected "
                "%lld/%lld/%lld in %lld/%lld/%lld",
                (long long)c.groupBytes[0], (long long)c.groupBytes[1],
                (long long)c.groupBytes[2], (long long)c.groupCalls[0],
                (long long)c.groupCalls[1], (long long)c.groupCalls[2],
                (long long)bytes[0], (long long)bytes[1], (long long)bytes[2],
                (long long)calls[0], (long long)calls[1], (long long)calls[2]);
  check.expectTrue("groups: " + type +
                       " bytes and calls per group (the "
                       "group's size as W)",
                   c.groupBytes == bytes && c.groupCalls == calls, detail);
  check.expectTrue("groups: " + type +
                       " bytes per kind are the groups' "
                       "summed",
                   c.bytes == kindBytes);
  destroyContext(ctx);
}

} // namespace

void prepareShardGroups(zrt_context *ctx, int64_t shardGroupSize) {
  if (shardGroupSize == 0)
    return;
  // A stage-3 classifier of one row per rank and no arguments: all that
  // validateProgram needs to check the groups.
  zrt_declare_program(ctx, ZRT_ABI_VERSION, ctx->worldSize, 3,
                      ZRT_TASK_CLASSIFY, ctx->worldSize, 1, 1, 2);
  zrt_declare_shard_groups(ctx, shardGroupSize);
  std::string error = validateProgram(ctx);
  if (!error.empty())
    fatal("%s", error.c_str());
  formShardGroups(ctx);
}

std::vector<int> groupMembers(int rank, int worldSize, int64_t shardGroupSize,
                              int32_t group) {
  int g = shardGroupSize > 0 ? (int)shardGroupSize : worldSize;
  std::vector<int> members;
  if (group == ZRT_GROUP_WORLD || (group == ZRT_GROUP_SHARD && g == worldSize))
    for (int r = 0; r < worldSize; ++r)
      members.push_back(r);
  else if (group == ZRT_GROUP_SHARD)
    for (int r = rank / g * g; r < rank / g * g + g; ++r)
      members.push_back(r);
  else if (shardGroupSize == 0)
    members.push_back(rank);
  else
    for (int r = rank % g; r < worldSize; r += g)
      members.push_back(r);
  return members;
}

void runGroupCases(Checker &check, const BufferAdapter &memory,
                   int64_t shardGroupSize) {
  int worldSize;
  ZRT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &worldSize));
  if (check.rank() == 0)
    std::printf("world size %d, shard groups of %lld\n", worldSize,
                (long long)(shardGroupSize ? shardGroupSize : worldSize));
  for (int32_t dtype : kDtypes)
    checkGroupDtype(check, memory, shardGroupSize, dtype);
}

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
