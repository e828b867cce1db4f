//===- copy.cpp - Copy, fill and taking this rank's shard -----------------===//

#include "core/check.h"
#include "core/context.h"

#include <cstring>

extern "C" void zrt_copy(zrt_context *, const void *src, void *dst,
                         int64_t bytes) {
  if (bytes > 0 && src != dst)
    std::memmove(dst, src, bytes);
}

extern "C" void zrt_fill(zrt_context *, float *dst, int64_t n, float value) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = value;
}

extern "C" void zrt_shard_slice(zrt_context *ctx, const float *full,
                                float *shard, int64_t numel,
                                int64_t shardNumel) {
  if (shardNumel * ctx->worldSize < numel)
    zrt::fatal("zrt_shard_slice: %d shards of %lld elements cannot hold %lld",
               ctx->worldSize, (long long)shardNumel, (long long)numel);
  int64_t first = (int64_t)ctx->rank * shardNumel;
  for (int64_t i = 0; i < shardNumel; ++i)
    shard[i] = first + i < numel ? full[first + i] : 0.0f;
}
