//===- mpi_transport.cpp - The CPU backend's collectives over MPI ---------===//
//
// bf16 has no MPI datatype: it travels as MPI_UINT16_T, and sums use a
// custom commutative MPI_Op that adds each pair of operands in float32 and
// rounds back (as NCCL sums bf16). ZRT_EXACT (the 128-bit fixed point of
// --deterministic programs) travels as a contiguous type of two int64, and
// sums with a commutative MPI_Op doing core/exact.h's exact sum (NaN
// absorbs, overflow gives NaN): integer sums, so the result does not depend
// on the order in which MPI combines the ranks.
//
// Large reduce-scatters and all-reduces do not use MPI's: each rank sends
// every other rank that rank's part of its tensor with point-to-point
// messages and adds the N copies of its own part itself, in rank order
// (reduceByExchange below); an all-reduce then all-gathers the parts.
// Open MPI 4.1's tuned MPI_Reduce_scatter_block reduces the whole tensor at
// one rank and scatters it: for a 154 MB float32 gradient over two ranks on
// this machine's shared memory it took 130 ms against 41 ms, and
// MPI_Allreduce 97 ms against about 65 ms. The sums are in one fixed order,
// so every run sums alike; bf16 parts are added in float32 and rounded once.
//
// Each collective was checked and counted when it started, on the calling
// thread (abi/collectives.cpp), so a bad call is reported where it was
// made; the MPI work runs later on the context's communication thread
// (comm_queue.h), in start order, over the communicator of its group
// (CollectiveInfo::group). A group of this rank alone has no communicator:
// its collectives are copies. User ops and datatypes belong to no
// communicator, so the bf16 and exact sums serve every group.
//
//===----------------------------------------------------------------------===//

#include "cpu/mpi_transport.h"
#include "core/check.h"
#include "core/comm_queue.h"
#include "core/context.h"
#include "core/exact.h"
#include "core/trace.h"
#include "cpu/dtype.h"

#include <algorithm>
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

void exactSum(void *in, void *inout, int *len, MPI_Datatype *) {
  for (int i = 0; i < *len; ++i)
    storeExact(inout, i, exactAdd(loadExact(in, i), loadExact(inout, i)));
}

/// ZRT_EXACT's datatype and sum, created once like the bf16 sum.
MPI_Datatype exactType() {
  static MPI_Datatype type = [] {
    MPI_Datatype created = MPI_DATATYPE_NULL;
    ZRT_MPI_CHECK(MPI_Type_contiguous(2, MPI_INT64_T, &created));
    ZRT_MPI_CHECK(MPI_Type_commit(&created));
    return created;
  }();
  return type;
}

MPI_Op exactSumOp() {
  static MPI_Op op = [] {
    MPI_Op created = MPI_OP_NULL;
    ZRT_MPI_CHECK(MPI_Op_create(exactSum, /*commute=*/1, &created));
    return created;
  }();
  return op;
}

/// The wire format of `dtype`; MPI objects are only asked for when MPI runs
/// (a local context has no communicator and never reaches MPI), and only on
/// the communication thread, since creating the bf16 op is an MPI call.
Wire wireFor(const CommGroup &group, const char *op, int32_t dtype) {
  int64_t size = dtypeSize(op, dtype);
  if (group.comm == MPI_COMM_NULL)
    return {size, MPI_DATATYPE_NULL, MPI_OP_NULL};
  if (dtype == ZRT_BF16)
    return {size, MPI_UINT16_T, bf16SumOp()};
  if (dtype == ZRT_EXACT)
    return {size, exactType(), exactSumOp()};
  return {size, MPI_FLOAT, MPI_SUM};
}

//===--- Reduction by direct exchange -------------------------------------===//

// Below this many bytes a tensor goes through MPI's own collective, whose
// latency (one or two rounds) beats the exchange's.
constexpr int64_t kExchangeMinBytes = 64 << 10;
// The received parts are staged a piece at a time: (N - 1) pieces of at
// most this many bytes together, the communication thread's scratch (not
// a tensor, so not in the ledger, like a kernel's workspace).
constexpr int64_t kExchangeScratchBytes = 16 << 20;
// No other point-to-point message travels on a group's communicator while
// collectives run (the trace's gather comes after the last one).
constexpr int kExchangeTag = 0x7a72;
// Elements summed per block: every copy of a block is read before the
// block is written, so the sum may land on this rank's own copy.
constexpr int64_t kSumBlock = 256;

/// out[i] = copies[0][i] + ... + copies[N - 1][i] for i < n, left to right,
/// in `dtype` (bf16 in float32, rounded once; exact sums exactly).
void sumInRankOrder(int32_t dtype, const std::vector<const char *> &copies,
                    char *out, int64_t n) {
  if (dtype == ZRT_EXACT) {
    for (int64_t i = 0; i < n; ++i) {
      Exact sum = loadExact(copies[0], i);
      for (size_t q = 1; q < copies.size(); ++q)
        sum = exactAdd(sum, loadExact(copies[q], i));
      storeExact(out, i, sum);
    }
    return;
  }
  dispatchDtype("zrt_reduce_scatter", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t b0 = 0; b0 < n; b0 += kSumBlock) {
      int64_t len = std::min(kSumBlock, n - b0);
      float sum[kSumBlock];
      const T *first = reinterpret_cast<const T *>(copies[0]) + b0;
      for (int64_t i = 0; i < len; ++i)
        sum[i] = load(first, i);
      for (size_t q = 1; q < copies.size(); ++q) {
        const T *copy = reinterpret_cast<const T *>(copies[q]) + b0;
        for (int64_t i = 0; i < len; ++i)
          sum[i] += load(copy, i);
      }
      T *to = reinterpret_cast<T *>(out) + b0;
      for (int64_t i = 0; i < len; ++i)
        store(to, i, sum[i]);
    }
  });
}

/// Rank q's part of an exchange: elements [begin(q), end(q)) of the tensor.
struct Parts {
  std::function<int64_t(int)> begin, end;
  int64_t length(int q) const { return end(q) - begin(q); }
};

/// Every rank of `group` holds a whole tensor `send`; afterwards `out` (this
/// rank's part, parts.length(rank) elements, which may be this rank's part
/// of `send` itself) is the sum over the ranks of that part.
void reduceByExchange(const CommGroup &group, int32_t dtype, const Wire &wire,
                      const char *send, char *out, const Parts &parts) {
  int n = group.size, me = group.rank;
  int64_t longest = 0;
  for (int q = 0; q < n; ++q)
    longest = std::max(longest, parts.length(q));
  int64_t piece =
      std::max<int64_t>(1, kExchangeScratchBytes / ((n - 1) * wire.size));
  piece = std::min(piece, std::max<int64_t>(longest, 1));
  ScratchLease scratch(((n - 1) * piece * wire.size + 3) / 4);
  char *received = reinterpret_cast<char *>(scratch.get());
  std::vector<MPI_Request> requests(2 * (n - 1));
  std::vector<const char *> copies(n);
  for (int64_t at = 0; at < longest; at += piece) {
    int64_t mine = std::clamp<int64_t>(parts.length(me) - at, 0, piece);
    int count = 0;
    for (int q = 0; q < n; ++q) {
      if (q == me) {
        copies[q] = send + (parts.begin(me) + at) * wire.size;
        continue;
      }
      char *slot = received + (q < me ? q : q - 1) * piece * wire.size;
      copies[q] = slot;
      if (mine > 0)
        ZRT_MPI_CHECK(MPI_Irecv(slot, (int)mine, wire.type, q, kExchangeTag,
                                group.comm, &requests[count++]));
      int64_t theirs = std::clamp<int64_t>(parts.length(q) - at, 0, piece);
      if (theirs > 0)
        ZRT_MPI_CHECK(MPI_Isend(send + (parts.begin(q) + at) * wire.size,
                                (int)theirs, wire.type, q, kExchangeTag,
                                group.comm, &requests[count++]));
    }
    ZRT_MPI_CHECK(MPI_Waitall(count, requests.data(), MPI_STATUSES_IGNORE));
    sumInRankOrder(dtype, copies, out + at * wire.size, mine);
  }
}

/// --check-collectives: before a collective runs, every rank shows the
/// others what it is about to run (kind, bytes and group); the first
/// difference stops the job, named by the rank (where it is in the step,
/// and the tensor it moves). Over the world, whatever the collective's
/// group: every rank runs every collective of the program, in one order.
/// Runs on the communication thread, in collective order, so the exchange
/// itself cannot be overtaken by another collective.
void checkSameCollective(zrt_context *ctx, const CollectiveInfo &info) {
  int64_t mine[3] = {info.kind, info.tensorBytes, info.group};
  std::vector<int64_t> all(3 * ctx->worldSize);
  ZRT_MPI_CHECK(MPI_Allgather(mine, 3, MPI_INT64_T, all.data(), 3, MPI_INT64_T,
                              ctx->comm));
  for (int r = 0; r < ctx->worldSize; ++r) {
    const int64_t *other = all.data() + 3 * r;
    if (other[0] == mine[0] && other[1] == mine[1] && other[2] == mine[2])
      continue;
    CollectiveInfo theirs;
    theirs.kind = int32_t(other[0]);
    theirs.tensorBytes = other[1];
    theirs.group = int32_t(other[2]);
    fatal("--check-collectives: the ranks diverge at %s: this rank runs %s, "
          "rank %d %s",
          describePosition(info).c_str(), describeTransfer(info).c_str(), r,
          describeTransfer(theirs).c_str());
  }
}

/// Hands `run` to the context's queue; `info` labels the trace and the
/// watchdog's message.
int64_t queueCollective(zrt_context *ctx, const CollectiveInfo &info,
                        int64_t countedBytes, std::function<void()> run) {
  CommOp op;
  if (ctx->checkCollectives && ctx->comm != MPI_COMM_NULL) {
    op.run = [ctx, info, run = std::move(run)] {
      checkSameCollective(ctx, info);
      run();
    };
  } else {
    op.run = std::move(run);
  }
  op.countedBytes = countedBytes;
  op.tracer = ctx->tracer.get();
  if (op.tracer)
    op.label =
        commLabel(collectiveName(info.kind), info.tensorBytes, info.label);
  op.info = info;
  return ctx->commQueue->start(std::move(op));
}

//===--- The work, on the communication thread ----------------------------===//

// One per collective of the catalogue (zero/zrt_collectives.def), over
// `group`: libzrt does not link (--no-undefined) without each.
#define ZRT_COLLECTIVE(KIND, name, RuntimeName, ...)                           \
  void run##RuntimeName(const CommGroup &group, const CollectiveCall &call);
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE

void runAllGather(const CommGroup &group, const CollectiveCall &call) {
  const void *shard = call.input;
  void *full = call.output;
  Wire wire = wireFor(group, "zrt_all_gather", call.dtype);
  if (group.comm == MPI_COMM_NULL) {
    std::memmove(full, shard, call.numel * wire.size);
    return;
  }
  // MPI writes W*S elements; full holds only numel, so a padded tensor is
  // gathered into the staging buffer of the start and its prefix kept.
  void *receive = call.staging ? call.staging : full;
  int countPerRank = (int)call.shardNumel; // checked at start
  ZRT_MPI_CHECK(MPI_Allgather(shard, countPerRank, wire.type, receive,
                              countPerRank, wire.type, group.comm));
  if (call.staging)
    std::memcpy(full, call.staging, call.numel * wire.size);
}

void runReduceScatter(const CommGroup &group, const CollectiveCall &call) {
  const void *full = call.input;
  void *shard = call.output;
  int64_t numel = call.numel, shardNumel = call.shardNumel;
  Wire wire = wireFor(group, "zrt_reduce_scatter", call.dtype);
  if (group.comm == MPI_COMM_NULL) {
    std::memmove(shard, full, numel * wire.size);
    std::memset((char *)shard + numel * wire.size, 0,
                (shardNumel - numel) * wire.size);
    return;
  }
  // MPI reads W*S elements; when the tensor is shorter, reduce a zero-padded
  // copy in the staging buffer of the start rather than read past it.
  const void *send = full;
  if (call.staging) {
    std::memcpy(call.staging, full, numel * wire.size);
    send = call.staging;
  }
  if (group.size > 1 && group.size * shardNumel * wire.size >= kExchangeMinBytes) {
    Parts parts{[=](int q) { return q * shardNumel; },
                [=](int q) { return (q + 1) * shardNumel; }};
    reduceByExchange(group, call.dtype, wire, static_cast<const char *>(send),
                     static_cast<char *>(shard), parts);
    return;
  }
  ZRT_MPI_CHECK(MPI_Reduce_scatter_block(send, shard, (int)shardNumel,
                                         wire.type, wire.sum, group.comm));
}

void runAllReduce(const CommGroup &group, const CollectiveCall &call) {
  const void *x = call.input;
  void *y = call.output;
  int64_t n = call.numel;
  Wire wire = wireFor(group, "zrt_all_reduce", call.dtype);
  if (group.comm == MPI_COMM_NULL) {
    if (n > 0 && x != y)
      std::memmove(y, x, n * wire.size);
    return;
  }
  if (group.size > 1 && n * wire.size >= kExchangeMinBytes) {
    // Rank q sums part q (n / N elements rounded up; the last parts may be
    // shorter or empty) into y, and the parts are then gathered in place.
    int64_t part = (n + group.size - 1) / group.size;
    Parts parts{[=](int q) { return std::min(n, q * part); },
                [=](int q) { return std::min(n, (q + 1) * part); }};
    char *yBytes = static_cast<char *>(y);
    reduceByExchange(group, call.dtype, wire, static_cast<const char *>(x),
                     yBytes + parts.begin(group.rank) * wire.size, parts);
    std::vector<int> counts(group.size), offsets(group.size);
    for (int q = 0; q < group.size; ++q) {
      counts[q] = (int)parts.length(q);
      offsets[q] = (int)parts.begin(q);
    }
    ZRT_MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y,
                                 counts.data(), offsets.data(), wire.type,
                                 group.comm));
    return;
  }
  const void *send = x == y ? MPI_IN_PLACE : x;
  ZRT_MPI_CHECK(
      MPI_Allreduce(send, y, (int)n, wire.type, wire.sum, group.comm));
}

/// The collective of `call`, by its kind's run<RuntimeName>.
void run(const CommGroup &group, const CollectiveCall &call) {
  switch (call.info.kind) {
#define ZRT_COLLECTIVE(KIND, name, RuntimeName, ...)                           \
  case RuntimeName:                                                            \
    return run##RuntimeName(group, call);
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
  }
  fatal("a collective of unknown kind %d", int(call.info.kind));
}

} // namespace

//===--- The transport ----------------------------------------------------===//

int64_t zrt::cpu::startCollective(zrt_context *ctx,
                                  const CollectiveCall &call) {
  CommGroup group = ctx->groups[call.info.group];
  return queueCollective(ctx, call.info, call.countedBytes,
                         [=] { run(group, call); });
}

void zrt::cpu::waitCollective(zrt_context *ctx, int64_t handle) {
  ctx->commQueue->wait(handle, ctx->tracer.get());
}

std::vector<int64_t> zrt::cpu::unwaitedCollectives(const zrt_context *ctx) {
  return ctx->commQueue->unwaited();
}
