//===- cuda_collective_tests.cpp - NCCL collectives against known values --===//
//
// The checks of zrt-collective-tests (runtime/tests/collective_tests.cpp) on
// contexts attached to a GPU the way the driver attaches them
// (selectDevice with --device=cuda: one GPU per rank by local rank, NCCL
// bootstrapped over MPI), with every tensor in device memory. Run under
// mpirun with one GPU per rank; `mpirun -np 1` already goes through NCCL.
// Inputs are small integers and halves, exact in bf16 whatever order NCCL
// sums in, so every expected value is exact.
//
// On top of the CPU checks, the stream ordering the CUDA backend promises:
// a collective started right after a kernel sees that kernel's output (the
// start waits for the compute stream), and a kernel issued right after a
// wait sees the collective's result (the wait orders the compute stream),
// with tensors large enough (16M elements) that a missing dependency would
// show. `--fault=double-wait` and `--fault=unknown-handle` misuse zrt_wait
// and must stop the job with the CPU backend's messages.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"
#include "core/device.h"
#include "tests/checker.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace zrt;

namespace {

int64_t elementSize(int32_t dtype) { return dtype == ZRT_BF16 ? 2 : 4; }

/// A context on this rank's GPU, as the driver makes it.
zrt_context *gpuContext() {
  zrt_context *ctx = createContext(MPI_COMM_WORLD);
  std::string banner;
  std::string error = selectDevice(ctx, DeviceChoice::Cuda, banner);
  if (!error.empty())
    fatal("%s", error.c_str());
  return ctx;
}

/// A tensor of `dtype` in the context's device memory.
class DeviceTensor {
public:
  DeviceTensor(zrt_context *ctx, int32_t dtype,
               const std::vector<float> &values)
      : ctx(ctx), dtype(dtype), n(values.size()) {
    Tensor host(dtype, values);
    ptr = zrt_alloc(ctx, n * elementSize(dtype), ZRT_MEM_ACTIVATION);
    copyToDevice(ctx, ptr, host.data(), n * elementSize(dtype));
  }
  /// `n` NaNs: an element a collective must not write stays NaN.
  DeviceTensor(zrt_context *ctx, int32_t dtype, int64_t n)
      : DeviceTensor(ctx, dtype, std::vector<float>(n, NAN)) {}
  ~DeviceTensor() { zrt_free(ctx, ptr); }
  DeviceTensor(const DeviceTensor &) = delete;
  DeviceTensor &operator=(const DeviceTensor &) = delete;

  void *data() { return ptr; }
  /// Waits for everything queued, then reads the tensor back.
  std::vector<float> values() const {
    synchronizeDevice(ctx);
    Tensor host(dtype, n);
    copyToHost(ctx, host.data(), ptr, n * elementSize(dtype));
    return host.values();
  }

private:
  zrt_context *ctx;
  int32_t dtype;
  int64_t n;
  void *ptr;
};

struct Suite {
  zrt_context *ctx;
  Checker &check;
  int32_t dtype;

  void expectTrue(const std::string &name, bool ok,
                  const std::string &detail = "") {
    size_t space = name.find(' ');
    check.expectTrue(name.substr(0, space) + " " + dtypeName(dtype) +
                         name.substr(space),
                     ok, detail);
  }
};

bool allGatherOk(Suite &t, int64_t numel, int64_t s) {
  std::vector<float> shard(s);
  for (int64_t i = 0; i < s; ++i)
    shard[i] = 16.0f * t.ctx->rank + i;
  DeviceTensor shardT(t.ctx, t.dtype, shard), fullT(t.ctx, t.dtype, numel + 1);
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

bool reduceScatterOk(Suite &t, int64_t numel, int64_t s) {
  const int W = t.ctx->worldSize;
  std::vector<float> full(numel);
  for (int64_t e = 0; e < numel; ++e)
    full[e] = (t.ctx->rank + 1.0f) * e;
  DeviceTensor fullT(t.ctx, t.dtype, full), shardT(t.ctx, t.dtype, s);
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
  DeviceTensor xT(t.ctx, t.dtype, x), yT(t.ctx, t.dtype, n);
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
  DeviceTensor fullT(t.ctx, t.dtype, full), shardT(t.ctx, t.dtype, s),
      gatheredT(t.ctx, t.dtype, numel);
  zrt_shard_slice(t.ctx, t.dtype, fullT.data(), shardT.data(), numel, s);
  zrt_all_gather(t.ctx, t.dtype, shardT.data(), gatheredT.data(), numel, s);
  t.expectTrue("shard_slice+all_gather restores the tensor",
               gatheredT.values() == full);
}

void testCounters(Suite &t) {
  const int64_t W = t.ctx->worldSize, size = elementSize(t.dtype);
  const int64_t rsPadded = W * shardNumel(3 * W + 1, W);
  const int64_t gatherBytes =
      size * (W * 5 + W * shardNumel(5 * W - 2, W) + W * shardNumel(11, W));
  const int64_t scatterBytes = size * (2 * W + rsPadded);
  const int64_t reduceBytes = size * (2 * 7 * 2);
  const CollectiveCounters &c = t.ctx->collectives;
  t.expectTrue("counters (bytes, as the CPU backend counts)",
               c.bytes[AllGather] == gatherBytes &&
                   c.bytes[ReduceScatter] == scatterBytes &&
                   c.bytes[AllReduce] == reduceBytes);
  t.expectTrue("counters (calls)", c.calls[AllGather] == 3 &&
                                       c.calls[ReduceScatter] == 2 &&
                                       c.calls[AllReduce] == 2);
}

/// As collective_tests.cpp: only round-to-nearest of the float32 pair sum
/// gives 1 + 2^-7.
void testBf16Rounding(zrt_context *ctx, Checker &check) {
  const int W = ctx->worldSize;
  float mine = ctx->rank == 0   ? 1.0f
               : ctx->rank == 1 ? std::ldexp(1.0f, -8) + std::ldexp(1.0f, -15)
                                : 0.0f;
  DeviceTensor xT(ctx, ZRT_BF16, std::vector<float>{mine});
  zrt_all_reduce(ctx, ZRT_BF16, xT.data(), xT.data(), 1);
  float expected = W > 1 ? 1.0f + std::ldexp(1.0f, -7) : 1.0f;
  check.expectTrue(
      "all_reduce bf16 sums pairs in float32, rounds to nearest even",
      xT.values()[0] == expected);
}

//===--- Asynchronous collectives -----------------------------------------===//

struct AsyncCase {
  CollectiveKind kind;
  int32_t dtype;
  int64_t numel;
  int64_t shard;
  bool inPlace;
  std::vector<float> input;

  int64_t outputNumel() const {
    return kind == AllGather ? numel : kind == ReduceScatter ? shard : numel;
  }
  int64_t countedBytes(int W) const {
    int64_t elements = kind == AllReduce ? 2 * numel : W * shard;
    return elements * elementSize(dtype);
  }
  int64_t stagingBytes(int W) const {
    if (kind == AllReduce || numel == W * shard || W == 1)
      return 0;
    return W * shard * elementSize(dtype);
  }
};

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

struct AsyncBuffers {
  DeviceTensor in, out;
  AsyncBuffers(zrt_context *ctx, const AsyncCase &c)
      : in(ctx, c.dtype, c.input), out(ctx, c.dtype, c.outputNumel()) {}
  std::vector<float> result(const AsyncCase &c) const {
    return c.inPlace ? in.values() : out.values();
  }
};

int64_t startCase(zrt_context *ctx, const AsyncCase &c, AsyncBuffers &b) {
  void *out = c.inPlace ? b.in.data() : b.out.data();
  switch (c.kind) {
  case AllGather:
    return zrt_all_gather_start(ctx, c.dtype, b.in.data(), out, c.numel,
                                c.shard);
  case ReduceScatter:
    return zrt_reduce_scatter_start(ctx, c.dtype, b.in.data(), out, c.numel,
                                    c.shard);
  default:
    return zrt_all_reduce_start(ctx, c.dtype, b.in.data(), out, c.numel);
  }
}

void runBlocking(zrt_context *ctx, const AsyncCase &c, AsyncBuffers &b) {
  void *out = c.inPlace ? b.in.data() : b.out.data();
  if (c.kind == AllGather)
    zrt_all_gather(ctx, c.dtype, b.in.data(), out, c.numel, c.shard);
  else if (c.kind == ReduceScatter)
    zrt_reduce_scatter(ctx, c.dtype, b.in.data(), out, c.numel, c.shard);
  else
    zrt_all_reduce(ctx, c.dtype, b.in.data(), out, c.numel);
}

void checkAsyncRound(Checker &check, const std::vector<AsyncCase> &cases,
                     const std::vector<std::vector<float>> &expected,
                     const std::vector<size_t> &order, const char *how) {
  zrt_context *ctx = gpuContext();
  const int W = ctx->worldSize;
  bool increasing = true, countedAtStart = false, same = true, ledger = false;
  {
    std::vector<std::unique_ptr<AsyncBuffers>> buffers;
    for (const AsyncCase &c : cases)
      buffers.push_back(std::make_unique<AsyncBuffers>(ctx, c));
    std::vector<int64_t> handles;
    for (size_t i = 0; i < cases.size(); ++i)
      handles.push_back(startCase(ctx, cases[i], *buffers[i]));
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

void testAsync(Checker &check) {
  int rank, W;
  ZRT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  ZRT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &W));
  std::vector<AsyncCase> cases = asyncCases(rank, W);
  std::vector<std::vector<float>> expected;
  zrt_context *ctx = gpuContext();
  for (const AsyncCase &c : cases) {
    AsyncBuffers b(ctx, c);
    runBlocking(ctx, c, b);
    expected.push_back(b.result(c));
  }
  destroyContext(ctx);
  std::vector<size_t> inOrder(cases.size()), reversed, shuffled;
  for (size_t i = 0; i < cases.size(); ++i)
    inOrder[i] = i;
  reversed.assign(inOrder.rbegin(), inOrder.rend());
  for (size_t i = 0; i < cases.size(); ++i)
    shuffled.push_back((i * 3 + 5) % cases.size());
  checkAsyncRound(check, cases, expected, inOrder,
                  "8 outstanding, waited in order");
  checkAsyncRound(check, cases, expected, reversed, "waited in reverse");
  checkAsyncRound(check, cases, expected, shuffled, "waited out of order");
}

/// Stream ordering across kernels and collectives, on 16M elements.
void testOrdering(Checker &check) {
  zrt_context *ctx = gpuContext();
  const int W = ctx->worldSize;
  const int64_t n = 16 << 20;
  bool startSeesKernel = true, kernelSeesWait = true;
  {
    DeviceTensor x(ctx, ZRT_F32, n), y(ctx, ZRT_F32, n), z(ctx, ZRT_F32, n);
    for (int round = 0; round < 3; ++round) {
      float value = ctx->rank + 1.0f + round;
      // A kernel writes x; the all-reduce started at once must read that.
      zrt_fill(ctx, ZRT_F32, x.data(), n, value);
      int64_t handle =
          zrt_all_reduce_start(ctx, ZRT_F32, x.data(), y.data(), n);
      zrt_wait(ctx, handle);
      // A kernel right after the wait must read the sum.
      zrt_add(ctx, ZRT_F32, y.data(), y.data(), z.data(), n);
      float sum = W * (W + 1) / 2.0f + W * (float)round;
      std::vector<float> ys = y.values(), zs = z.values();
      for (int64_t i = 0; i < n; i += 4099) {
        startSeesKernel &= ys[i] == sum;
        kernelSeesWait &= zs[i] == 2 * sum;
      }
      startSeesKernel &= ys[n - 1] == sum;
      kernelSeesWait &= zs[n - 1] == 2 * sum;
    }
  }
  destroyContext(ctx);
  check.expectTrue("ordering: a collective started after a kernel reads its "
                   "output (16M floats, 3 rounds)",
                   startSeesKernel);
  check.expectTrue("ordering: a kernel issued after a wait reads the "
                   "collective's result (16M floats, 3 rounds)",
                   kernelSeesWait);
}

int runFault(const std::string &fault) {
  zrt_context *ctx = gpuContext();
  {
    DeviceTensor one(ctx, ZRT_F32, std::vector<float>{1.0f});
    if (fault == "double-wait") {
      int64_t handle =
          zrt_all_reduce_start(ctx, ZRT_F32, one.data(), one.data(), 1);
      zrt_wait(ctx, handle);
      zrt_wait(ctx, handle);
    } else if (fault == "unknown-handle") {
      zrt_all_reduce(ctx, ZRT_F32, one.data(), one.data(), 1);
      zrt_wait(ctx, 42);
    } else {
      std::fprintf(stderr, "unknown fault '%s'\n", fault.c_str());
      return 2;
    }
  }
  std::printf("fault %s did not stop the job\n", fault.c_str());
  destroyContext(ctx);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  initMpi(&argc, &argv);
  int status;
  if (argc == 2 && std::strncmp(argv[1], "--fault=", 8) == 0) {
    status = runFault(argv[1] + 8);
  } else {
    Checker check(MPI_COMM_WORLD);
    int worldSize;
    ZRT_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &worldSize));
    if (check.rank() == 0)
      std::printf("world size %d\n", worldSize);
    for (int32_t dtype : kDtypes) {
      zrt_context *ctx = gpuContext();
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
    testAsync(check);
    testOrdering(check);
    status = check.finish();
  }
  ZRT_MPI_CHECK(MPI_Finalize());
  return status;
}
