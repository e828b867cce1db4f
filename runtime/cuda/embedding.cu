//===- embedding.cu - Token embedding lookup and its gradient -------------===//
//
// The lookup is a row gather: one block per position copies its table row
// in the widest unit the row size and the pointers allow (16, 4 or 2
// bytes), moving raw bits so one kernel serves every dtype.
//
// The gradient must be deterministic and accumulated in float32 once per
// table row even for bf16 tables, so it cannot scatter with atomics. It
// groups positions by id as the CPU backend does (a stable sort), but on the
// device: CUB's radix sort of (id, position) pairs, which is stable, so each
// id's positions come out in increasing order. A block then starts at every
// sorted index whose id differs from its predecessor's (the start of that
// id's run), adds the run's dout rows column by column in float32, in
// position order, and rounds once into dtable. That is the CPU's order
// exactly, so float32 results are bit-identical to it. Rows of ids that do
// not occur keep the zeros of the initial memset.
//
// An id outside [0, vocab) is recorded with reportDeviceError; the lookup
// leaves its output row untouched and the gradient sorts it under a
// sentinel key past every valid id and skips it.
//
// The sort's buffers come from the stream-ordered allocator (Scratch in
// device_math.cuh): private to the call, not charged to the ledger.
//
// The kernels are in embedding_kernels.cuh, which the host emulator of
// tests/emulation compiles too (zrt-cuda-kernels-emulated); this file holds
// their launches.
//
//===----------------------------------------------------------------------===//

#include "cuda/embedding_kernels.cuh"
#include "cuda/launch_utils.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace zrt::cuda {

using namespace embeddings;

namespace {

template <typename U>
void launchGather(cudaStream_t stream, const int32_t *ids, const void *table,
                  void *out, int64_t n, int64_t vocab, int64_t rowBytes,
                  DeviceError *errors) {
  launchKernel(embeddingKernel<U>, rowBlocks(n), kGatherThreads, 0, stream, ids,
               static_cast<const U *>(table), static_cast<U *>(out), n, vocab,
               rowBytes / (int64_t)sizeof(U), errors);
  ZRT_CUDA_CHECK_LAUNCH("zrt_embedding");
}

} // namespace

void embedding(zrt_context *ctx, int32_t dtype, const int32_t *ids,
               const void *table, void *out, int64_t n, int64_t vocab,
               int64_t dim) {
  const int64_t rowBytes =
      std::max<int64_t>(dim, 0) * floatDtypeSize("zrt_embedding", dtype);
  if (n <= 0)
    return;
  cudaStream_t stream = computeStream(ctx);
  DeviceError *errors = deviceErrorSlot(ctx);
  const bool aligned16 = isAligned16(table) && isAligned16(out);
  const bool aligned4 = reinterpret_cast<uintptr_t>(table) % 4 == 0 &&
                        reinterpret_cast<uintptr_t>(out) % 4 == 0;
  if (rowBytes % 16 == 0 && aligned16)
    launchGather<uint4>(stream, ids, table, out, n, vocab, rowBytes, errors);
  else if (rowBytes % 4 == 0 && aligned4)
    launchGather<uint32_t>(stream, ids, table, out, n, vocab, rowBytes, errors);
  else
    launchGather<uint16_t>(stream, ids, table, out, n, vocab, rowBytes, errors);
}

void embeddingGrad(zrt_context *ctx, int32_t dtype, const int32_t *ids,
                   const void *dout, void *dtable, int64_t n, int64_t vocab,
                   int64_t dim) {
  dispatchDtype("zrt_embedding_grad", dtype, [&](auto tag) {
    using T = decltype(tag);
    cudaStream_t stream = computeStream(ctx);
    const int64_t tableElems =
        std::max<int64_t>(vocab, 0) * std::max<int64_t>(dim, 0);
    // Zero bits are 0.0 in float32 and bfloat16 alike.
    if (tableElems > 0)
      ZRT_CUDA_CHECK(
          cudaMemsetAsync(dtable, 0, tableElems * sizeof(T), stream));
    if (n <= 0)
      return;

    // Valid ids are below min(vocab, 2^31) (they are int32); the sentinel
    // is that bound, and the sort looks only at the bits it needs.
    const uint32_t sentinel =
        (uint32_t)std::clamp<int64_t>(vocab, 0, int64_t(1) << 31);
    int endBit = 1;
    while (endBit < 32 && (uint64_t(1) << endBit) <= sentinel)
      ++endBit;

    size_t cubBytes = 0;
    ZRT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, cubBytes, (const uint32_t *)nullptr, (uint32_t *)nullptr,
        (const int64_t *)nullptr, (int64_t *)nullptr, n, 0, endBit, stream));
    const size_t keyBytes = alignScratch(n * sizeof(uint32_t));
    const size_t posBytes = alignScratch(n * sizeof(int64_t));
    Scratch scratch(ctx, 2 * keyBytes + 2 * posBytes + cubBytes);
    uint32_t *keysIn = scratch.as<uint32_t>(0);
    uint32_t *keysOut = scratch.as<uint32_t>(keyBytes);
    int64_t *posIn = scratch.as<int64_t>(2 * keyBytes);
    int64_t *posOut = scratch.as<int64_t>(2 * keyBytes + posBytes);
    void *cubTemp = scratch.as<void>(2 * keyBytes + 2 * posBytes);

    launchKernel(sortKeysKernel, gridFor(n), kThreads, 0, stream, ids, keysIn,
                 posIn, n, vocab, sentinel, deviceErrorSlot(ctx));
    ZRT_CUDA_CHECK_LAUNCH("zrt_embedding_grad");
    if (dim <= 0)
      return;
    ZRT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cubTemp, cubBytes, keysIn,
                                                   keysOut, posIn, posOut, n, 0,
                                                   endBit, stream));
    launchKernel(accumulateRunsKernel<T>, rowBlocks(n), kThreads, 0, stream,
                 keysOut, posOut, static_cast<const T *>(dout),
                 static_cast<T *>(dtable), n, dim, sentinel);
    ZRT_CUDA_CHECK_LAUNCH("zrt_embedding_grad");
  });
}

} // namespace zrt::cuda
