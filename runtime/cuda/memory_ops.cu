//===- memory_ops.cu - Copy, fill and taking this rank's shard ------------===//
//
// Byte moves go through the copy engine's API (cudaMemcpyAsync,
// cudaMemsetAsync) on the compute stream, so they stay ordered with the
// kernels around them. zrt_copy has memmove semantics on the CPU; a device
// copy between overlapping ranges is undefined, so such a copy (never made
// by generated code, but allowed by the contract) goes through scratch.
// fill needs a kernel only for non-zero values: zero bits are 0.0 in float32,
// bfloat16 and ZRT_EXACT alike.
//
// The kernels are in memory_ops_kernels.cuh, which the host emulator of
// tests/emulation compiles too (zrt-cuda-kernels-emulated); this file holds
// their launches.
//
//===----------------------------------------------------------------------===//

#include "core/context.h"
#include "cuda/launch_utils.cuh"
#include "cuda/memory_ops_kernels.cuh"

#include <cmath>

namespace zrt::cuda {

using namespace memory;

void copy(zrt_context *ctx, const void *src, void *dst, int64_t bytes) {
  if (bytes <= 0 || src == dst)
    return;
  cudaStream_t stream = computeStream(ctx);
  const auto s = reinterpret_cast<uintptr_t>(src);
  const auto d = reinterpret_cast<uintptr_t>(dst);
  const bool overlap = s < d + (uint64_t)bytes && d < s + (uint64_t)bytes;
  if (!overlap) {
    ZRT_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  Scratch staging(ctx, bytes);
  ZRT_CUDA_CHECK(cudaMemcpyAsync(staging.as<void>(), src, bytes,
                                 cudaMemcpyDeviceToDevice, stream));
  ZRT_CUDA_CHECK(cudaMemcpyAsync(dst, staging.as<void>(), bytes,
                                 cudaMemcpyDeviceToDevice, stream));
}

void fill(zrt_context *ctx, int32_t dtype, void *dst, int64_t n, float value) {
  if (dtype == ZRT_EXACT) {
    if (n <= 0)
      return;
    cudaStream_t stream = computeStream(ctx);
    const Exact bits = toExact(value);
    if (bits == 0) {
      ZRT_CUDA_CHECK(cudaMemsetAsync(dst, 0, n * sizeof(Exact), stream));
      return;
    }
    launchKernel(fillExactKernel, gridFor(n), kThreads, 0, stream,
                 static_cast<Exact *>(dst), n, bits);
    ZRT_CUDA_CHECK_LAUNCH("zrt_fill");
    return;
  }
  dispatchDtype("zrt_fill", dtype, [&](auto tag) {
    using T = decltype(tag);
    if (n <= 0)
      return;
    cudaStream_t stream = computeStream(ctx);
    if (value == 0.0f && !std::signbit(value)) {
      ZRT_CUDA_CHECK(cudaMemsetAsync(dst, 0, n * sizeof(T), stream));
      return;
    }
    launchKernel(fillKernel<T>, gridFor(n), kThreads, 0, stream,
                 static_cast<T *>(dst), n, value);
    ZRT_CUDA_CHECK_LAUNCH("zrt_fill");
  });
}

void shardSlice(zrt_context *ctx, int32_t dtype, const void *full, void *shard,
                int64_t numel, int64_t shardNumel) {
  const int64_t size = dtypeSize("zrt_shard_slice", dtype);
  // This rank's shard of a sharded argument: shard r % G of G with shard
  // groups (zrt_declare_shard_groups), shard r of W without.
  const int64_t shards = shardCount(ctx);
  if (numel < 0 || shardNumel < 0 || shardNumel * shards < numel)
    fatal("zrt_shard_slice: %lld shards of %lld elements cannot hold %lld",
          (long long)shards, (long long)shardNumel, (long long)numel);
  const int64_t first = shardIndex(ctx) * shardNumel;
  const int64_t kept =
      std::max<int64_t>(0, std::min(shardNumel, numel - first));
  cudaStream_t stream = computeStream(ctx);
  if (kept > 0)
    ZRT_CUDA_CHECK(
        cudaMemcpyAsync(shard, static_cast<const char *>(full) + first * size,
                        kept * size, cudaMemcpyDeviceToDevice, stream));
  if (shardNumel > kept)
    ZRT_CUDA_CHECK(cudaMemsetAsync(static_cast<char *>(shard) + kept * size, 0,
                                   (shardNumel - kept) * size, stream));
}

} // namespace zrt::cuda
