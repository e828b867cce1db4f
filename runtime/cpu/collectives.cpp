//===- collectives.cpp - Data-parallel collectives over MPI ---------------===//
//
// Bytes moved are counted by zrt.h's zrt_traffic_elements, the formula the
// compiler's --report predicts with: the ZeRO paper's data volume per rank
// (an all-gather or a reduce-scatter the whole padded tensor, W*S elements as
// MPI moves; an all-reduce twice its buffer). The count is by formula, also
// at world size 1 where MPI moves nothing, and by the element size of the
// dtype (bf16 tensors travel as 2-byte elements).
//
// bf16 has no MPI datatype: it travels as MPI_UINT16_T, and sums use a
// custom commutative MPI_Op that adds each pair of operands in float32 and
// rounds back (as NCCL sums bf16).
//
// Each collective is checked and counted when it starts, on the calling
// thread, so a bad call is reported where it was made; the MPI work (and
// the staging it needs, charged then) runs later on the context's
// communication thread (comm_queue.h). The blocking forms are a start and
// a wait, so that collectives of both forms keep one order on every rank.
//
// On a context attached to a device (core/device.h) the checks, the counts
// and the staging are these same ones, so the ledger is identical on both
// backends; only the transport differs (DeviceRuntime: NCCL on CUDA).
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"
#include "core/trace.h"
#include "cpu/comm_queue.h"
#include "cpu/dtype.h"

#include <climits>
#include <cstring>
#include <functional>
#include <vector>

using namespace zrt;

namespace {

/// How one dtype travels: element size, MPI datatype and sum.
struct Wire {
  int64_t size;
  MPI_Datatype type;
  MPI_Op sum;
};

void bf16Sum(void *in, void *inout, int *len, MPI_Datatype *) {
  const Bf16 *a = (const Bf16 *)in;
  Bf16 *b = (Bf16 *)inout;
  for (int i = 0; i < *len; ++i)
    store(b, i, load(a, i) + load(b, i));
}

/// The bf16 sum, created on first use (on a communication thread; a static
/// initialiser, so two contexts' threads cannot both create it) and kept for
/// the life of the process (MPI frees user ops at MPI_Finalize).
MPI_Op bf16SumOp() {
  static MPI_Op op = [] {
    MPI_Op created = MPI_OP_NULL;
    ZRT_MPI_CHECK(MPI_Op_create(bf16Sum, /*commute=*/1, &created));
    return created;
  }();
  return op;
}

/// The wire format of `dtype`; MPI objects are only asked for when MPI runs
/// (a local context has no communicator and never reaches MPI), and only on
/// the communication thread, since creating the bf16 op is an MPI call.
Wire wireFor(zrt_context *ctx, const char *op, int32_t dtype) {
  int64_t size = dtypeSize(op, dtype);
  if (ctx->comm == MPI_COMM_NULL)
    return {size, MPI_DATATYPE_NULL, MPI_OP_NULL};
  if (dtype == ZRT_BF16)
    return {size, MPI_UINT16_T, bf16SumOp()};
  return {size, MPI_FLOAT, MPI_SUM};
}

void count(zrt_context *ctx, CollectiveKind kind, int64_t elements,
           int64_t size) {
  ctx->collectives.calls[kind] += 1;
  ctx->collectives.bytes[kind] += elements * size;
}

/// MPI counts are int: refuse, by name, what would silently wrap.
int mpiCount(const char *op, int64_t elements) {
  if (elements < 0 || elements > INT_MAX)
    fatal("%s: %lld elements do not fit in an MPI count", op,
          (long long)elements);
  return (int)elements;
}

/// A context without a communicator is only valid for a single rank, where
/// a collective is a copy.
void checkLocalSpan(zrt_context *ctx, const char *op) {
  if (ctx->comm == MPI_COMM_NULL && ctx->worldSize != 1)
    fatal("%s: a context without MPI cannot span %d ranks", op, ctx->worldSize);
}

/// --check-collectives: before a collective runs, every rank shows the
/// others what it is about to run (kind, bytes, its number on the rank);
/// the first difference stops the job, named by rank 0. Runs on the
/// communication thread, in collective order, so the exchange itself cannot
/// be overtaken by another collective.
void checkSameCollective(zrt_context *ctx, CollectiveKind kind,
                         int64_t tensorBytes, int64_t sequence) {
  int64_t mine[3] = {int64_t(kind), tensorBytes, sequence};
  std::vector<int64_t> all(3 * ctx->worldSize);
  ZRT_MPI_CHECK(MPI_Allgather(mine, 3, MPI_INT64_T, all.data(), 3,
                              MPI_INT64_T, ctx->comm));
  for (int r = 1; r < ctx->worldSize; ++r) {
    const int64_t *first = all.data(), *other = all.data() + 3 * r;
    if (first[0] == other[0] && first[1] == other[1])
      continue;
    fatal("--check-collectives: the ranks diverge at collective %lld: rank 0 "
          "runs %s of %lld bytes, rank %d %s of %lld bytes",
          (long long)sequence, collectiveName(int(first[0])),
          (long long)first[1], r, collectiveName(int(other[0])),
          (long long)other[1]);
  }
}

/// Hands `run` to the context's queue; `tensorBytes` labels the trace.
int64_t startCollective(zrt_context *ctx, CollectiveKind kind,
                        int64_t tensorBytes, int64_t countedBytes,
                        std::function<void()> run) {
  CommOp op;
  if (ctx->checkCollectives && ctx->comm != MPI_COMM_NULL) {
    int64_t sequence = ++ctx->collectivesStarted;
    op.run = [ctx, kind, tensorBytes, sequence, run = std::move(run)] {
      checkSameCollective(ctx, kind, tensorBytes, sequence);
      run();
    };
  } else {
    op.run = std::move(run);
  }
  op.countedBytes = countedBytes;
  op.tracer = ctx->tracer.get();
  if (op.tracer)
    op.label = commLabel(collectiveName(kind), tensorBytes);
  op.kind = collectiveName(kind);
  op.tensorBytes = tensorBytes;
  return ctx->commQueue->start(std::move(op));
}

void checkShards(const char *op, int64_t W, int64_t numel, int64_t shardNumel) {
  if (numel < 0 || shardNumel < 0 || shardNumel * W < numel)
    fatal("%s: %lld shards of %lld elements cannot hold %lld", op, (long long)W,
          (long long)shardNumel, (long long)numel);
}

//===--- The work, on the communication thread ----------------------------===//

void runAllGather(zrt_context *ctx, int32_t dtype, const void *shard,
                  void *full, int64_t numel, int64_t shardNumel,
                  void *staging) {
  const char *op = "zrt_all_gather";
  Wire wire = wireFor(ctx, op, dtype);
  int64_t W = ctx->worldSize;
  if (ctx->comm == MPI_COMM_NULL) {
    std::memmove(full, shard, numel * wire.size);
    return;
  }
  // MPI writes W*S elements; full holds only numel, so a padded tensor is
  // gathered into the staging buffer of the start and its prefix kept.
  void *receive = staging ? staging : full;
  (void)W;
  int countPerRank = (int)shardNumel; // checked at start
  ZRT_MPI_CHECK(MPI_Allgather(shard, countPerRank, wire.type, receive,
                              countPerRank, wire.type, ctx->comm));
  if (staging)
    std::memcpy(full, staging, numel * wire.size);
}

void runReduceScatter(zrt_context *ctx, int32_t dtype, const void *full,
                      void *shard, int64_t numel, int64_t shardNumel,
                      void *staging) {
  const char *op = "zrt_reduce_scatter";
  Wire wire = wireFor(ctx, op, dtype);
  int64_t W = ctx->worldSize;
  if (ctx->comm == MPI_COMM_NULL) {
    std::memmove(shard, full, numel * wire.size);
    std::memset((char *)shard + numel * wire.size, 0,
                (shardNumel - numel) * wire.size);
    return;
  }
  // MPI reads W*S elements; when the tensor is shorter, reduce a zero-padded
  // copy in the staging buffer of the start rather than read past it.
  const void *send = full;
  (void)W;
  if (staging) {
    std::memcpy(staging, full, numel * wire.size);
    send = staging;
  }
  ZRT_MPI_CHECK(MPI_Reduce_scatter_block(send, shard, (int)shardNumel,
                                         wire.type, wire.sum, ctx->comm));
}

void runAllReduce(zrt_context *ctx, int32_t dtype, const void *x, void *y,
                  int64_t n) {
  Wire wire = wireFor(ctx, "zrt_all_reduce", dtype);
  if (ctx->comm == MPI_COMM_NULL) {
    if (n > 0 && x != y)
      std::memmove(y, x, n * wire.size);
    return;
  }
  const void *send = x == y ? MPI_IN_PLACE : x;
  ZRT_MPI_CHECK(MPI_Allreduce(send, y, (int)n, wire.type, wire.sum, ctx->comm));
}

} // namespace

//===--- The C ABI: checks and counts now, the work queued ----------------===//

/// A padded collective's staging copy is allocated here, on the thread that
/// starts it, and freed by its wait: its ledger charge spans exactly start to
/// wait, whatever the communication thread's timing, so the peaks the
/// compiler's --report predicts are the ones measured.
static void *stagingFor(zrt_context *ctx, int64_t numel, int64_t shardNumel,
                        int64_t elementSize) {
  int64_t padded = ctx->worldSize * shardNumel;
  if (ctx->comm == MPI_COMM_NULL || numel >= padded)
    return nullptr;
  return zrt_alloc(ctx, padded * elementSize, ZRT_MEM_COMM);
}

static int64_t rememberStaging(zrt_context *ctx, int64_t handle,
                               void *staging) {
  if (staging)
    ctx->stagingByHandle[handle] = staging;
  return handle;
}

/// On a device (core/device.h) the collective is handed to the backend's
/// transport instead of the queue; with --trace its slice on the comm track
/// spans the launch on the host (the device runs it asynchronously).
template <typename Start>
static int64_t startOnDevice(zrt_context *ctx, CollectiveKind kind,
                             int64_t tensorBytes, int64_t countedBytes,
                             Start start) {
  Tracer *tracer = ctx->tracer.get();
  int64_t begin = tracer ? tracer->now() : 0;
  int64_t handle = start();
  if (tracer)
    tracer->record(Tracer::Comm, commLabel(collectiveName(kind), tensorBytes),
                   "collective", begin, tracer->now(), countedBytes);
  return handle;
}

/// The start of an all-gather or reduce-scatter: the checks and counts they
/// share, their staging, and `run(staging)` queued (or, on a device with a
/// transport of its own, `onDevice(device, staging, countedBytes)` called).
template <typename Run, typename OnDevice>
static int64_t startPadded(zrt_context *ctx, const char *op,
                           CollectiveKind kind, int32_t dtype, int64_t numel,
                           int64_t shardNumel, Run run, OnDevice onDevice) {
  int64_t size = dtypeSize(op, dtype), W = ctx->worldSize;
  checkShards(op, W, numel, shardNumel);
  mpiCount(op, shardNumel);
  mpiCount(op, W * shardNumel);
  checkLocalSpan(ctx, op);
  count(ctx, kind,
        zrt_traffic_elements((zrt_collective)kind, numel, shardNumel, W),
        size);
  void *staging = stagingFor(ctx, numel, shardNumel, size);
  int64_t bytes = W * shardNumel * size;
  if (DeviceRuntime *device = deviceTransport(ctx))
    return rememberStaging(
        ctx,
        startOnDevice(ctx, kind, bytes, bytes,
                      [&] { return onDevice(device, staging, bytes); }),
        staging);
  return rememberStaging(
      ctx, startCollective(ctx, kind, bytes, bytes, [=] { run(staging); }),
      staging);
}

extern "C" int64_t zrt_all_gather_start(zrt_context *ctx, int32_t dtype,
                                        const void *shard, void *full,
                                        int64_t numel, int64_t shardNumel) {
  return startPadded(
      ctx, "zrt_all_gather", AllGather, dtype, numel, shardNumel,
      [=](void *staging) {
        runAllGather(ctx, dtype, shard, full, numel, shardNumel, staging);
      },
      [=](DeviceRuntime *device, void *staging, int64_t counted) {
        return device->startAllGather(dtype, shard, full, numel, shardNumel,
                                      staging, counted);
      });
}

extern "C" int64_t zrt_reduce_scatter_start(zrt_context *ctx, int32_t dtype,
                                            const void *full, void *shard,
                                            int64_t numel, int64_t shardNumel) {
  return startPadded(
      ctx, "zrt_reduce_scatter", ReduceScatter, dtype, numel, shardNumel,
      [=](void *staging) {
        runReduceScatter(ctx, dtype, full, shard, numel, shardNumel, staging);
      },
      [=](DeviceRuntime *device, void *staging, int64_t counted) {
        return device->startReduceScatter(dtype, full, shard, numel, shardNumel,
                                          staging, counted);
      });
}

extern "C" int64_t zrt_all_reduce_start(zrt_context *ctx, int32_t dtype,
                                        const void *x, void *y, int64_t n) {
  const char *op = "zrt_all_reduce";
  int64_t size = dtypeSize(op, dtype);
  mpiCount(op, n);
  checkLocalSpan(ctx, op);
  count(ctx, AllReduce,
        zrt_traffic_elements(ZRT_ALL_REDUCE, n, n, ctx->worldSize), size);
  if (DeviceRuntime *device = deviceTransport(ctx))
    return startOnDevice(ctx, AllReduce, n * size, 2 * n * size, [&] {
      return device->startAllReduce(dtype, x, y, n, 2 * n * size);
    });
  return startCollective(ctx, AllReduce, n * size, 2 * n * size,
                         [=] { runAllReduce(ctx, dtype, x, y, n); });
}

extern "C" void zrt_wait(zrt_context *ctx, int64_t handle) {
  if (DeviceRuntime *device = deviceTransport(ctx))
    device->wait(handle);
  else
    ctx->commQueue->wait(handle, ctx->tracer.get());
  auto staging = ctx->stagingByHandle.find(handle);
  if (staging != ctx->stagingByHandle.end()) {
    zrt_free(ctx, staging->second);
    ctx->stagingByHandle.erase(staging);
  }
}

extern "C" void zrt_all_gather(zrt_context *ctx, int32_t dtype,
                               const void *shard, void *full, int64_t numel,
                               int64_t shardNumel) {
  zrt_wait(ctx,
           zrt_all_gather_start(ctx, dtype, shard, full, numel, shardNumel));
}

extern "C" void zrt_reduce_scatter(zrt_context *ctx, int32_t dtype,
                                   const void *full, void *shard, int64_t numel,
                                   int64_t shardNumel) {
  zrt_wait(ctx, zrt_reduce_scatter_start(ctx, dtype, full, shard, numel,
                                         shardNumel));
}

extern "C" void zrt_all_reduce(zrt_context *ctx, int32_t dtype, const void *x,
                               void *y, int64_t n) {
  zrt_wait(ctx, zrt_all_reduce_start(ctx, dtype, x, y, n));
}
