//===- collectives.cpp - Data-parallel collectives over MPI ---------------===//
//
// Bytes moved are counted the way the ZeRO paper counts data volume per rank,
// which is what the compiler's --report predicts: an all-gather or a
// reduce-scatter moves the whole padded tensor (W*S elements, as MPI does), an
// all-reduce moves twice its buffer (a reduce-scatter plus an all-gather).
// So stages 0-2 move 2 Psi per step and stage 3 moves 3 Psi. The count is by
// formula, also at world size 1 where MPI moves nothing.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"

#include <climits>
#include <cstring>

using namespace zrt;

static void count(zrt_context *ctx, CollectiveKind kind, int64_t elements) {
  ctx->collectives.calls[kind] += 1;
  ctx->collectives.bytes[kind] += elements * (int64_t)sizeof(float);
}

/// MPI counts are int: refuse, by name, what would silently wrap.
static int mpiCount(const char *op, int64_t elements) {
  if (elements < 0 || elements > INT_MAX)
    fatal("%s: %lld elements do not fit in an MPI count", op,
          (long long)elements);
  return (int)elements;
}

/// True when the context has no communicator, which is only valid for a
/// single rank: the collective is then a copy.
static bool isLocal(zrt_context *ctx, const char *op) {
  if (ctx->comm != MPI_COMM_NULL)
    return false;
  if (ctx->worldSize != 1)
    fatal("%s: a context without MPI cannot span %d ranks", op, ctx->worldSize);
  return true;
}

extern "C" void zrt_all_gather(zrt_context *ctx, const float *shard,
                               float *full, int64_t numel, int64_t shardNumel) {
  int64_t W = ctx->worldSize;
  if (numel < 0 || shardNumel * W < numel)
    fatal("zrt_all_gather: %lld shards of %lld elements cannot hold %lld",
          (long long)W, (long long)shardNumel, (long long)numel);
  int countPerRank = mpiCount("zrt_all_gather", shardNumel);
  mpiCount("zrt_all_gather", W * shardNumel);
  count(ctx, AllGather, W * shardNumel);
  if (isLocal(ctx, "zrt_all_gather")) {
    std::memmove(full, shard, numel * sizeof(float));
    return;
  }
  // MPI writes W*S elements; full holds only numel, so gather a padded
  // tensor into staging (charged as comm) and keep the unpadded prefix.
  float *receive = full;
  float *staging = nullptr;
  if (numel < W * shardNumel) {
    staging = (float *)zrt_alloc(ctx, W * shardNumel * (int64_t)sizeof(float),
                                 ZRT_MEM_COMM);
    receive = staging;
  }
  ZRT_MPI_CHECK(MPI_Allgather(shard, countPerRank, MPI_FLOAT, receive,
                              countPerRank, MPI_FLOAT, ctx->comm));
  if (staging) {
    std::memcpy(full, staging, numel * sizeof(float));
    zrt_free(ctx, staging);
  }
}

extern "C" void zrt_reduce_scatter(zrt_context *ctx, const float *full,
                                   float *shard, int64_t numel,
                                   int64_t shardNumel) {
  int64_t W = ctx->worldSize;
  if (numel < 0 || shardNumel * W < numel)
    fatal("zrt_reduce_scatter: %lld shards of %lld elements cannot hold %lld",
          (long long)W, (long long)shardNumel, (long long)numel);
  int countPerRank = mpiCount("zrt_reduce_scatter", shardNumel);
  mpiCount("zrt_reduce_scatter", W * shardNumel);
  count(ctx, ReduceScatter, W * shardNumel);
  if (isLocal(ctx, "zrt_reduce_scatter")) {
    std::memmove(shard, full, numel * sizeof(float));
    std::memset(shard + numel, 0, (shardNumel - numel) * sizeof(float));
    return;
  }
  // MPI reads W*S elements; when the tensor is shorter, reduce a zero-padded
  // copy (charged to the ledger as comm staging) rather than read past it.
  const float *send = full;
  float *staging = nullptr;
  if (numel < W * shardNumel) {
    staging = (float *)zrt_alloc(ctx, W * shardNumel * (int64_t)sizeof(float),
                                 ZRT_MEM_COMM);
    std::memcpy(staging, full, numel * sizeof(float));
    send = staging;
  }
  ZRT_MPI_CHECK(MPI_Reduce_scatter_block(send, shard, countPerRank, MPI_FLOAT,
                                         MPI_SUM, ctx->comm));
  zrt_free(ctx, staging);
}

extern "C" void zrt_all_reduce(zrt_context *ctx, const float *x, float *y,
                               int64_t n) {
  int countAll = mpiCount("zrt_all_reduce", n);
  count(ctx, AllReduce, 2 * n);
  if (isLocal(ctx, "zrt_all_reduce")) {
    std::memmove(y, x, n * sizeof(float));
    return;
  }
  const void *send = x == y ? MPI_IN_PLACE : x;
  ZRT_MPI_CHECK(
      MPI_Allreduce(send, y, countAll, MPI_FLOAT, MPI_SUM, ctx->comm));
}
