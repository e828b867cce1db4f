//===- copy.cpp - Copy, fill, cast and taking this rank's shard -----------===//

#include "core/check.h"
#include "core/context.h"
#include "core/exact.h"
#include "cpu/dtype.h"
#include "cpu/kernels.h"
#include "cpu/vector_math.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

using namespace zrt;

void zrt::cpu::copy(zrt_context *, const void *src, void *dst, int64_t bytes) {
  if (bytes > 0 && src != dst)
    std::memmove(dst, src, bytes);
}

void zrt::cpu::fill(zrt_context *, int32_t dtype, void *dst, int64_t n,
                    float value) {
  if (dtype == ZRT_EXACT) {
    const Exact bits = toExact(value);
    for (int64_t i = 0; i < n; ++i)
      storeExact(dst, i, bits);
    return;
  }
  dispatchDtype("zrt_fill", dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i)
      store((T *)dst, i, value);
  });
}

ZRT_CPU_CLONES void zrt::cpu::cast(zrt_context *, int32_t srcDtype, int32_t dstDtype,
                    const void *src, void *dst, int64_t n) {
  dispatchDtype("zrt_cast", srcDtype, [&](auto srcTag) {
    using S = decltype(srcTag);
    dispatchDtype("zrt_cast", dstDtype, [&](auto dstTag) {
      using D = decltype(dstTag);
      if constexpr (std::is_same_v<S, D>) {
        if (n > 0 && src != dst)
          std::memmove(dst, src, n * sizeof(S));
      } else {
        for (int64_t i = 0; i < n; ++i)
          store((D *)dst, i, load((const S *)src, i));
      }
    });
  });
}

void zrt::cpu::shardSlice(zrt_context *ctx, int32_t dtype, const void *full,
                          void *shard, int64_t numel, int64_t shardNumel) {
  int64_t size = dtypeSize("zrt_shard_slice", dtype);
  // This rank's shard of a sharded argument: shard r % G of G with shard
  // groups (zrt_declare_shard_groups), shard r of W without.
  const int64_t shards = shardCount(ctx);
  if (numel < 0 || shardNumel < 0 || shardNumel * shards < numel)
    fatal("zrt_shard_slice: %lld shards of %lld elements cannot hold %lld",
          (long long)shards, (long long)shardNumel, (long long)numel);
  int64_t first = shardIndex(ctx) * shardNumel;
  int64_t kept = std::max<int64_t>(0, std::min(shardNumel, numel - first));
  if (kept > 0)
    std::memcpy(shard, (const char *)full + first * size, kept * size);
  // Zero bits are 0.0 in float32, bf16 and ZRT_EXACT.
  std::memset((char *)shard + kept * size, 0, (shardNumel - kept) * size);
}
