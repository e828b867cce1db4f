//===- collective_tests.cpp - Collectives against known values ------------===//
//
// Run under mpirun at several world sizes. The cases, blocking and
// asynchronous, are those of tests/collective_cases.h, shared with
// zrt-cuda-collective-tests; here their tensors are in host memory.
//
// `--overlap` starts a 16M-element all-reduce and runs kernels on the main
// thread while it is in flight (correctness only).
//
// `--exact` checks the collectives of ZRT_EXACT (the 128-bit fixed point of
// --deterministic programs, summed by a custom MPI_Op): all_reduce (blocking
// and started, in place and not), reduce_scatter with padding and
// all_gather, bit for bit against a sum made in rank order, including a NaN
// sentinel from one rank and a sum that overflows at 3 ranks and more.
//
// `--groups=G` checks the collectives over each zrt_group on contexts whose
// program declares shard groups of G ranks (0: none, the groups of a flat
// program): the shared group cases of tests/collective_cases.h in f32 and
// bf16, the same for ZRT_EXACT, bit for bit, then the ledger of the exact
// context with its per-group lines.
//
// `--exchange` checks the large reduce-scatters and all-reduces, which the
// CPU backend runs as a point-to-point exchange a piece at a time, not by
// MPI's collectives: f32, bf16 and ZRT_EXACT tensors of about 36 MB (two
// pieces or more at every world size), parts of unequal length, padding,
// in place and not, each bit for bit against the sum in rank order (bf16:
// in float32, rounded once).
//
// `--host-tasks` checks the host tasks of zero-overlap-offload on a context
// with its host thread: an update queued in a task and waited for equals
// the same update run at once, bit for bit; tasks run in the order queued;
// a wait for a buffer no task writes returns at once. `--fault=
// host-task-nested`, `host-task-unopened` and `host-task-copy-down` misuse
// them.
//
// `--fault=bad-label` makes the last rank hit a bad label while the others
// wait in an all-reduce (the job must abort, not hang); `--fault=mpi-error`
// makes an MPI call fail so the check macro's report can be inspected, and
// `--fault=comm-mpi-error` makes one fail on the communication thread.
// `--fault=double-wait` and `--fault=unknown-handle` misuse zrt_wait;
// `--fault=never-wait` leaves a collective unwaited at teardown (a warning);
// `--fault=diverge` has the ranks issue different collectives under
// --check-collectives; `--fault=bad-group` passes a group that is no
// zrt_group.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/comm_queue.h"
#include "core/context.h"
#include "core/exact.h"
#include "core/ledger.h"
#include "cpu/dtype.h"
#include "tests/checker.h"
#include "tests/collective_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace zrt;

namespace {

/// The CPU backend's collectives read and write host memory in place: the
/// shared cases' tensors are plain host buffers on plain contexts.
class HostBuffers final : public BufferAdapter {
public:
  zrt_context *makeContext(int64_t shardGroupSize) const override {
    zrt_context *ctx = createContext(MPI_COMM_WORLD);
    prepareShardGroups(ctx, shardGroupSize);
    return ctx;
  }
  void *allocate(zrt_context *, int64_t bytes) const override {
    return std::malloc(bytes);
  }
  void release(zrt_context *, void *ptr) const override { std::free(ptr); }
  void upload(zrt_context *, void *dst, const void *src,
              int64_t bytes) const override {
    std::memcpy(dst, src, bytes);
  }
  void download(zrt_context *, void *dst, const void *src,
                int64_t bytes) const override {
    std::memcpy(dst, src, bytes);
  }
};

/// A 16M-element all-reduce in flight while the main thread runs kernels.
/// Timing is not checked (the machine may have fewer cores than threads):
/// both results must be right.
int runOverlap() {
  Checker check(MPI_COMM_WORLD);
  zrt_context *ctx = createContext(MPI_COMM_WORLD);
  const int W = ctx->worldSize;
  const int64_t n = 16 << 20;
  std::vector<float> x(n), y(n, -1.0f);
  for (int64_t i = 0; i < n; ++i)
    x[i] = ctx->rank + (float)(i % 5);
  int64_t handle = zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, ZRT_F32, x.data(),
                                        y.data(), n, "test");
  bool counted = ctx->collectives.bytes[AllReduce] == 2 * n * 4;
  const int64_t m = 128, iterations = 64;
  std::vector<float> a(m * m, 1.0f), b(m * m, 0.5f), c(m * m);
  bool kernelsOk = true;
  for (int64_t it = 0; it < iterations; ++it) {
    zrt_matmul(ctx, ZRT_F32, a.data(), b.data(), c.data(), m, m, m, 0, 0);
    zrt_add(ctx, ZRT_F32, c.data(), c.data(), c.data(), m * m);
    for (float value : c)
      kernelsOk &= value == 0.5f * m * 2;
  }
  zrt_wait(ctx, handle);
  bool reduced = true, inputKept = true;
  for (int64_t i = 0; i < n; ++i) {
    reduced &= y[i] == W * (W - 1) / 2.0f + W * (float)(i % 5);
    inputKept &= x[i] == ctx->rank + (float)(i % 5);
  }
  destroyContext(ctx);
  check.expectTrue("overlap: all_reduce of 16M floats counted at start",
                   counted);
  check.expectTrue("overlap: 64 matmul+add kernels right while it ran",
                   kernelsOk);
  check.expectTrue("overlap: all_reduce result right after the wait",
                   reduced && inputKept);
  return check.finish();
}

/// Element i of rank r's input to the exchange checks: a float of
/// magnitude 2^-10 to 2^9 and either sign, so the order of a sum shows in
/// its rounding; every rank can make every other rank's.
float exchangeValue(int rank, int64_t i) {
  uint32_t h = uint32_t(i) * 2654435761u ^ uint32_t(rank + 1) * 40503u;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  float mantissa = 1.0f + float(h & 0xffff) / 65536.0f;
  return std::ldexp(mantissa, int((h >> 16) % 20) - 10) *
         ((h >> 31) ? -1.0f : 1.0f);
}

/// Whether a and b hold the same bits (Bf16 has no ==).
template <typename T> bool sameBits(const T &a, const T &b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// One dtype's large reduce-scatter (padded) and all-reduce (out of place,
/// then in place), against `expected(i)`, the rank-order sum of element i.
template <typename T, typename Make, typename Sum>
void checkExchange(Checker &check, zrt_context *ctx, int32_t dtype,
                   const char *name, int64_t numel, Make make, Sum expected) {
  const int W = ctx->worldSize, rank = ctx->rank;
  const int64_t s = shardNumel(numel, W);
  std::vector<T> full(numel);
  for (int64_t i = 0; i < numel; ++i)
    full[i] = make(rank, i);
  std::vector<T> shard(s), y(numel);
  zrt_reduce_scatter(ctx, ZRT_GROUP_WORLD, dtype, full.data(), shard.data(),
                     numel, s, "exchange");
  bool scattered = true;
  for (int64_t i = 0; i < s; ++i) {
    int64_t e = rank * s + i;
    scattered &= sameBits(shard[i], e < numel ? expected(e) : T{});
  }
  zrt_all_reduce(ctx, ZRT_GROUP_WORLD, dtype, full.data(), y.data(), numel,
                 "exchange");
  bool reduced = true, kept = true;
  for (int64_t i = 0; i < numel; ++i) {
    reduced &= sameBits(y[i], expected(i));
    kept &= sameBits(full[i], make(rank, i));
  }
  zrt_wait(ctx, zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, dtype, full.data(),
                                     full.data(), numel, "exchange"));
  bool inPlace = std::memcmp(full.data(), y.data(), numel * sizeof(T)) == 0;
  std::string what = std::string(name) + " of " + std::to_string(numel) +
                     " elements";
  check.expectTrue("reduce_scatter " + what + " (padded) == the rank-order "
                   "sum's shard (bit-exact)", scattered);
  check.expectTrue("all_reduce " + what + " == the rank-order sum "
                   "(bit-exact), input kept", reduced && kept);
  check.expectTrue("all_reduce_start " + what + " in place == out of place",
                   inPlace);
}

int runExchange() {
  Checker check(MPI_COMM_WORLD);
  zrt_context *ctx = createContext(MPI_COMM_WORLD);
  const int W = ctx->worldSize;
  if (ctx->rank == 0)
    std::printf("world size %d\n", W);
  // 9M floats, 18M bf16 and 2.25M exact (all about 36 MB, plus one
  // element so that the parts differ): each rank's part is more than the
  // 16 MB of staged pieces over W - 1 peers, at every W from 2 to 4.
  checkExchange<float>(
      check, ctx, ZRT_F32, "f32", 9000001, exchangeValue, [&](int64_t i) {
        float sum = exchangeValue(0, i);
        for (int r = 1; r < W; ++r)
          sum += exchangeValue(r, i);
        return sum;
      });
  auto bf16Of = [](int rank, int64_t i) {
    return floatToBf16(exchangeValue(rank, i));
  };
  checkExchange<Bf16>(
      check, ctx, ZRT_BF16, "bf16", 18000001, bf16Of, [&](int64_t i) {
        float sum = bf16ToFloat(bf16Of(0, i));
        for (int r = 1; r < W; ++r)
          sum += bf16ToFloat(bf16Of(r, i));
        return floatToBf16(sum);
      });
  auto exactOf = [](int rank, int64_t i) {
    return toExact(exchangeValue(rank, i));
  };
  checkExchange<Exact>(
      check, ctx, ZRT_EXACT, "exact", 2250001, exactOf, [&](int64_t i) {
        Exact sum = 0;
        for (int r = 0; r < W; ++r)
          sum = exactAdd(sum, exactOf(r, i));
        return sum;
      });
  destroyContext(ctx);
  return check.finish();
}

int runHostTasks() {
  Checker check(MPI_COMM_WORLD);
  zrt_context *ctx = createContext(MPI_COMM_WORLD);
  const int64_t n = 1 << 16;
  std::vector<float> p(n), g(n), m(n, 0.0f), v(n, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    p[i] = exchangeValue(ctx->rank, i);
    g[i] = exchangeValue(ctx->rank + 7, i);
  }
  float lr = 1e-2f, step = 1, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f,
        decay = 0.1f;
  auto update = [&](std::vector<float> &param, std::vector<float> &m1,
                    std::vector<float> &v1) {
    zrt_host_adamw(ctx, ZRT_F32, param.data(), g.data(), m1.data(), v1.data(),
                   param.data(), m1.data(), v1.data(), n, &lr, &step, nullptr,
                   &beta1, &beta2, &eps, &decay);
  };
  // At once, outside a task.
  std::vector<float> atOnce = p, mOnce = m, vOnce = v;
  update(atOnce, mOnce, vOnce);
  // In a task, then uploaded into `device` (host memory on the CPU).
  std::vector<float> queued = p, mQueued = m, vQueued = v, device(n, -1.0f);
  zrt_host_task_begin(ctx);
  update(queued, mQueued, vQueued);
  zrt_copy_to_device(ctx, queued.data(), device.data(), n * sizeof(float));
  zrt_host_task_end(ctx, device.data());
  zrt_host_wait(ctx, device.data());
  check.expectTrue("host task: the update and upload, waited for, equal the "
                   "update at once (bit-exact)",
                   device == atOnce && mQueued == mOnce && vQueued == vOnce);
  // Tasks in order: each uploads its own value into one buffer; the last
  // one queued is what the wait for the buffer leaves.
  std::vector<std::vector<float>> values;
  for (int t = 0; t < 8; ++t)
    values.emplace_back(n, float(t));
  std::vector<float> target(n, -1.0f);
  for (int t = 0; t < 8; ++t) {
    zrt_host_task_begin(ctx);
    zrt_copy_to_device(ctx, values[t].data(), target.data(), n * sizeof(float));
    zrt_host_task_end(ctx, target.data());
  }
  zrt_host_wait(ctx, target.data());
  check.expectTrue("host tasks run in the order queued (the last upload "
                   "stays)",
                   target == values[7]);
  float untouched = 3.0f;
  zrt_host_wait(ctx, &untouched);
  zrt_host_wait_all(ctx);
  check.expectTrue("host_wait for a buffer no task writes returns at once",
                   untouched == 3.0f);
  check.expectTrue("host tasks: every upload counted in the ledger",
                   ctx->ledger.offloadCalls[1] == 9);
  destroyContext(ctx);
  return check.finish();
}

/// Rank r's exact values: floats of magnitudes 2^-70 to 2^40, converted;
/// every rank can make every other rank's for the reference.
std::vector<Exact> exactValues(int rank, int64_t n) {
  std::mt19937 rng(7919 * rank + 1);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-70, 40), sign(0, 1);
  std::vector<Exact> values(n);
  for (Exact &v : values)
    v = toExact(std::ldexp(mantissa(rng), exponent(rng)) *
                (sign(rng) ? -1.0f : 1.0f));
  return values;
}

/// The all-reduce input of `rank`: exactValues, except element 0 (NaN on
/// the last rank) and element 1 (the largest float below 2^62 on every
/// rank: three of them overflow).
std::vector<Exact> allReduceInput(int rank, int worldSize, int64_t n) {
  std::vector<Exact> x = exactValues(rank, n);
  x[0] = rank == worldSize - 1 ? kExactNaN : x[0];
  x[1] = toExact(0x1p62f * (1.0f - 0x1p-24f));
  return x;
}

/// The elementwise exact sum of every rank's `input(rank)`, in rank order.
template <typename Input>
std::vector<Exact> sumOverRanks(int worldSize, int64_t n, Input input) {
  std::vector<Exact> sum(n, 0);
  for (int r = 0; r < worldSize; ++r) {
    std::vector<Exact> x = input(r);
    for (int64_t i = 0; i < n; ++i)
      sum[i] = exactAdd(sum[i], x[i]);
  }
  return sum;
}

int runExact() {
  Checker check(MPI_COMM_WORLD);
  zrt_context *ctx = createContext(MPI_COMM_WORLD);
  const int W = ctx->worldSize, rank = ctx->rank;
  if (rank == 0)
    std::printf("world size %d\n", W);
  const int64_t n = 1000;
  std::vector<Exact> x = allReduceInput(rank, W, n), y(n, 5);
  std::vector<Exact> expected = sumOverRanks(
      W, n, [&](int r) { return allReduceInput(r, W, n); });
  zrt_all_reduce(ctx, ZRT_GROUP_WORLD, ZRT_EXACT, x.data(), y.data(), n,
                 "exact");
  bool counted = ctx->collectives.bytes[AllReduce] == 2 * n * 16;
  check.expectTrue("all_reduce exact out of place == the exact sum over "
                   "ranks (bit-exact)",
                   y == expected && x == allReduceInput(rank, W, n));
  check.expectTrue("all_reduce exact: one rank's NaN sentinel -> NaN; 3 or "
                   "more times 2^62 - 2^38 overflows -> NaN",
                   y[0] == kExactNaN &&
                       (y[1] == kExactNaN) == (W >= 3));
  check.expectTrue("all_reduce exact counted at 16 bytes an element",
                   counted);
  int64_t handle = zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, ZRT_EXACT,
                                        x.data(), x.data(), n, "exact");
  zrt_wait(ctx, handle);
  check.expectTrue("all_reduce_start exact in place == the blocking form",
                   x == expected);

  // 3W + 1 elements: S = 4 and the last W - 1 of the padded tensor are 0.
  const int64_t numel = 3 * W + 1, s = shardNumel(numel, W);
  auto fullOf = [&](int r) {
    std::vector<Exact> full = exactValues(r + 100, numel);
    full.resize(W * s, 0);
    return full;
  };
  std::vector<Exact> full = fullOf(rank), shard(s, 5);
  full.resize(numel);
  std::vector<Exact> sum = sumOverRanks(W, W * s, fullOf);
  zrt_reduce_scatter(ctx, ZRT_GROUP_WORLD, ZRT_EXACT, full.data(), shard.data(),
                     numel, s, "exact");
  check.expectTrue("reduce_scatter exact numel 3W+1 (padded) == the exact "
                   "sum's shard (bit-exact)",
                   std::equal(shard.begin(), shard.end(),
                              sum.begin() + rank * s));

  // 5W - 2 elements: the padding of the last shard is dropped.
  const int64_t gathered = 5 * W - 2, g = shardNumel(gathered, W);
  std::vector<Exact> mine = exactValues(rank + 200, g), all(gathered + 1, 5);
  zrt_all_gather(ctx, ZRT_GROUP_WORLD, ZRT_EXACT, mine.data(), all.data(),
                 gathered, g, "exact");
  bool gatherOk = all[gathered] == 5;
  for (int64_t e = 0; e < gathered; ++e)
    gatherOk &= all[e] == exactValues(int(e / g) + 200, g)[e % g];
  check.expectTrue("all_gather exact numel 5W-2 (padding dropped, "
                   "bit-exact)",
                   gatherOk);
  destroyContext(ctx);
  return check.finish();
}

/// The exact collectives over every group of a context with shard groups of
/// `shardGroupSize` (0: none), each bit for bit against the exact sum over
/// the group's ranks: all_reduce (blocking, and started in place),
/// reduce_scatter padded, all_gather padded. Then the context's ledger.
void checkExactGroups(Checker &check, int64_t shardGroupSize) {
  zrt_context *ctx = createContext(MPI_COMM_WORLD);
  prepareShardGroups(ctx, shardGroupSize);
  const int W = ctx->worldSize, rank = ctx->rank;
  for (int32_t group = 0; group < ZRT_NUM_GROUPS; ++group) {
    std::vector<int> members = groupMembers(rank, W, shardGroupSize, group);
    const int64_t size = members.size();
    const int64_t me =
        std::find(members.begin(), members.end(), rank) - members.begin();
    std::string over = std::string("over the ") + groupName(group) +
                       " group (" + std::to_string(size) +
                       (size == 1 ? " rank)" : " ranks)");
    const int seed = 1000 * (group + 1);
    const int64_t n = 300;
    auto sumOfMembers = [&](int64_t count, auto input) {
      std::vector<Exact> sum(count, 0);
      for (int member : members) {
        std::vector<Exact> x = input(member);
        for (int64_t i = 0; i < count; ++i)
          sum[i] = exactAdd(sum[i], x[i]);
      }
      return sum;
    };
    std::vector<Exact> x = exactValues(rank + seed, n), y(n, 5);
    std::vector<Exact> expected =
        sumOfMembers(n, [&](int r) { return exactValues(r + seed, n); });
    zrt_all_reduce(ctx, group, ZRT_EXACT, x.data(), y.data(), n, "exact");
    zrt_wait(ctx, zrt_all_reduce_start(ctx, group, ZRT_EXACT, x.data(),
                                       x.data(), n, "exact"));
    check.expectTrue("all_reduce exact " + over +
                         ", blocking and started in "
                         "place (bit-exact)",
                     y == expected && x == expected);

    const int64_t numel = 3 * size + 1, s = shardNumel(numel, size);
    auto fullOf = [&](int r) {
      std::vector<Exact> full = exactValues(r + seed + 100, numel);
      full.resize(size * s, 0);
      return full;
    };
    std::vector<Exact> full = fullOf(rank), shard(s, 5);
    full.resize(numel);
    std::vector<Exact> sum = sumOfMembers(size * s, fullOf);
    zrt_reduce_scatter(ctx, group, ZRT_EXACT, full.data(), shard.data(), numel,
                       s, "exact");
    check.expectTrue(
        "reduce_scatter exact " + over +
            " numel 3W+1 (padded, "
            "bit-exact)",
        std::equal(shard.begin(), shard.end(), sum.begin() + me * s));

    const int64_t gathered = 5 * size - 2, g = shardNumel(gathered, size);
    std::vector<Exact> mine = exactValues(rank + seed + 200, g),
                       all(gathered + 1, 5);
    zrt_all_gather(ctx, group, ZRT_EXACT, mine.data(), all.data(), gathered, g,
                   "exact");
    bool gatherOk = all[gathered] == 5;
    for (int64_t e = 0; e < gathered; ++e)
      gatherOk &= all[e] == exactValues(members[e / g] + seed + 200, g)[e % g];
    check.expectTrue("all_gather exact " + over +
                         " numel 5W-2 (padding "
                         "dropped, bit-exact)",
                     gatherOk);
  }
  printLedger(ctx);
  destroyContext(ctx);
}

int runGroups(int64_t shardGroupSize) {
  Checker check(MPI_COMM_WORLD);
  runGroupCases(check, HostBuffers(), shardGroupSize);
  checkExactGroups(check, shardGroupSize);
  return check.finish();
}

int runFault(zrt_context *ctx, const std::string &fault) {
  float one = 1;
  if (fault == "double-wait") {
    int64_t handle = zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, ZRT_F32, &one,
                                          &one, 1, "test");
    zrt_wait(ctx, handle);
    zrt_wait(ctx, handle);
  } else if (fault == "unknown-handle") {
    zrt_all_reduce(ctx, ZRT_GROUP_WORLD, ZRT_F32, &one, &one, 1, nullptr);
    zrt_wait(ctx, 42);
  } else if (fault == "comm-mpi-error") {
    // Through the queue's own interface: no zrt_* collective passes MPI a
    // bad argument, so the failure is made by hand, on the comm thread.
    CommOp op;
    op.run = [ctx] {
      float value = 0;
      ZRT_MPI_CHECK(MPI_Bcast(&value, -1, MPI_FLOAT, 0, ctx->comm));
    };
    zrt_wait(ctx, ctx->commQueue->start(std::move(op)));
  } else if (fault == "never-wait") {
    // Static: destroyContext runs them (and warns) after this returns.
    static float values[2] = {1, 2};
    zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, ZRT_F32, &values[0], &values[0],
                         1, "test");
    zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, ZRT_F32, &values[1], &values[1],
                         1, "test");
    return 0;
  } else if (fault == "bad-label") {
    float logits[2 * 3] = {0}, loss = 0, sum = 1;
    int32_t labels[2] = {1, 7};
    if (ctx->rank == ctx->worldSize - 1)
      zrt_softmax_xent(ctx, ZRT_F32, logits, labels, &loss, 2, 3, 2.0f);
    zrt_all_reduce(ctx, ZRT_GROUP_WORLD, ZRT_F32, &sum, &sum, 1, "test");
  } else if (fault == "diverge") {
    // Rank 0 reduces one element, the others two: with the check on, the
    // first difference is named before either runs.
    ctx->checkCollectives = true;
    float values[2] = {1, 2};
    zrt_all_reduce(ctx, ZRT_GROUP_WORLD, ZRT_F32, values, values, 1, "test");
    zrt_all_reduce(ctx, ZRT_GROUP_WORLD, ZRT_F32, values, values,
                   ctx->rank == 0 ? 1 : 2, "test");
  } else if (fault == "host-task-nested") {
    zrt_host_task_begin(ctx);
    zrt_host_task_begin(ctx);
  } else if (fault == "host-task-unopened") {
    zrt_host_task_end(ctx, &one);
  } else if (fault == "host-task-copy-down") {
    float down = 0;
    zrt_host_task_begin(ctx);
    zrt_copy_to_host(ctx, &one, &down, sizeof(float));
  } else if (fault == "bad-group") {
    zrt_all_reduce(ctx, ZRT_NUM_GROUPS, ZRT_F32, &one, &one, 1, "test");
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
  initMpi(&argc, &argv);
  int status;
  if (argc == 2 && std::strncmp(argv[1], "--fault=", 8) == 0) {
    zrt_context *ctx = createContext(MPI_COMM_WORLD);
    status = runFault(ctx, argv[1] + 8);
    destroyContext(ctx);
  } else if (argc == 2 && std::strcmp(argv[1], "--overlap") == 0) {
    status = runOverlap();
  } else if (argc == 2 && std::strcmp(argv[1], "--host-tasks") == 0) {
    status = runHostTasks();
  } else if (argc == 2 && std::strcmp(argv[1], "--exchange") == 0) {
    status = runExchange();
  } else if (argc == 2 && std::strcmp(argv[1], "--exact") == 0) {
    status = runExact();
  } else if (argc == 2 && std::strncmp(argv[1], "--groups=", 9) == 0) {
    status = runGroups(std::atoll(argv[1] + 9));
  } else {
    Checker check(MPI_COMM_WORLD);
    runCollectiveCases(check, HostBuffers());
    status = check.finish();
  }
  ZRT_MPI_CHECK(MPI_Finalize());
  return status;
}
