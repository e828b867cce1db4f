//===- collectives.cpp - Data-parallel collectives over MPI ---------------===//
//
// Bytes moved are counted the way the ZeRO paper counts data volume per rank,
// which is what the compiler's --report predicts: an all-gather or a
// reduce-scatter moves the whole padded tensor (W*S elements, as MPI does), an
// all-reduce moves twice its buffer (a reduce-scatter plus an all-gather).
// So stages 0-2 move 2 Psi per step and stage 3 moves 3 Psi. The count is by
// formula, also at world size 1 where MPI moves nothing, and by the element
// size of the dtype (bf16 tensors travel as 2-byte elements).
//
// bf16 has no MPI datatype: it travels as MPI_UINT16_T, and sums use a
// custom commutative MPI_Op that adds each pair of operands in float32 and
// rounds back (as NCCL sums bf16).
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"
#include "cpu/dtype.h"

#include <climits>
#include <cstring>

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

/// The bf16 sum, created on first use and kept for the life of the process
/// (MPI frees user ops at MPI_Finalize).
MPI_Op bf16SumOp() {
  static MPI_Op op = MPI_OP_NULL;
  if (op == MPI_OP_NULL)
    ZRT_MPI_CHECK(MPI_Op_create(bf16Sum, /*commute=*/1, &op));
  return op;
}

/// The wire format of `dtype`; MPI objects are only asked for when MPI runs
/// (a local context has no communicator and never reaches MPI).
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

/// True when the context has no communicator, which is only valid for a
/// single rank: the collective is then a copy.
bool isLocal(zrt_context *ctx, const char *op) {
  if (ctx->comm != MPI_COMM_NULL)
    return false;
  if (ctx->worldSize != 1)
    fatal("%s: a context without MPI cannot span %d ranks", op, ctx->worldSize);
  return true;
}

} // namespace

extern "C" void zrt_all_gather(zrt_context *ctx, int32_t dtype,
                               const void *shard, void *full, int64_t numel,
                               int64_t shardNumel) {
  const char *op = "zrt_all_gather";
  Wire wire = wireFor(ctx, op, dtype);
  int64_t W = ctx->worldSize;
  if (numel < 0 || shardNumel * W < numel)
    fatal("%s: %lld shards of %lld elements cannot hold %lld", op, (long long)W,
          (long long)shardNumel, (long long)numel);
  int countPerRank = mpiCount(op, shardNumel);
  mpiCount(op, W * shardNumel);
  count(ctx, AllGather, W * shardNumel, wire.size);
  if (isLocal(ctx, op)) {
    std::memmove(full, shard, numel * wire.size);
    return;
  }
  // MPI writes W*S elements; full holds only numel, so gather a padded
  // tensor into staging (charged as comm) and keep the unpadded prefix.
  void *receive = full;
  void *staging = nullptr;
  if (numel < W * shardNumel) {
    staging = zrt_alloc(ctx, W * shardNumel * wire.size, ZRT_MEM_COMM);
    receive = staging;
  }
  ZRT_MPI_CHECK(MPI_Allgather(shard, countPerRank, wire.type, receive,
                              countPerRank, wire.type, ctx->comm));
  if (staging) {
    std::memcpy(full, staging, numel * wire.size);
    zrt_free(ctx, staging);
  }
}

extern "C" void zrt_reduce_scatter(zrt_context *ctx, int32_t dtype,
                                   const void *full, void *shard, int64_t numel,
                                   int64_t shardNumel) {
  const char *op = "zrt_reduce_scatter";
  Wire wire = wireFor(ctx, op, dtype);
  int64_t W = ctx->worldSize;
  if (numel < 0 || shardNumel * W < numel)
    fatal("%s: %lld shards of %lld elements cannot hold %lld", op, (long long)W,
          (long long)shardNumel, (long long)numel);
  int countPerRank = mpiCount(op, shardNumel);
  mpiCount(op, W * shardNumel);
  count(ctx, ReduceScatter, W * shardNumel, wire.size);
  if (isLocal(ctx, op)) {
    std::memmove(shard, full, numel * wire.size);
    std::memset((char *)shard + numel * wire.size, 0,
                (shardNumel - numel) * wire.size);
    return;
  }
  // MPI reads W*S elements; when the tensor is shorter, reduce a zero-padded
  // copy (charged to the ledger as comm staging) rather than read past it.
  const void *send = full;
  void *staging = nullptr;
  if (numel < W * shardNumel) {
    staging = zrt_alloc(ctx, W * shardNumel * wire.size, ZRT_MEM_COMM);
    std::memcpy(staging, full, numel * wire.size);
    send = staging;
  }
  ZRT_MPI_CHECK(MPI_Reduce_scatter_block(send, shard, countPerRank, wire.type,
                                         wire.sum, ctx->comm));
  zrt_free(ctx, staging);
}

extern "C" void zrt_all_reduce(zrt_context *ctx, int32_t dtype, const void *x,
                               void *y, int64_t n) {
  const char *op = "zrt_all_reduce";
  Wire wire = wireFor(ctx, op, dtype);
  int countAll = mpiCount(op, n);
  count(ctx, AllReduce, 2 * n, wire.size);
  if (isLocal(ctx, op)) {
    if (n > 0 && x != y)
      std::memmove(y, x, n * wire.size);
    return;
  }
  const void *send = x == y ? MPI_IN_PLACE : x;
  ZRT_MPI_CHECK(
      MPI_Allreduce(send, y, countAll, wire.type, wire.sum, ctx->comm));
}
