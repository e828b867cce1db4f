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
//===----------------------------------------------------------------------===//

#include "cuda/device_math.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace zrt::cuda {

namespace {

constexpr int kGatherThreads = 128;
constexpr int64_t kMaxRowBlocks = 1 << 20;

/// out[i, :] = table[ids[i], :] in units of U (rowUnits units a row).
template <typename U>
__global__ void embeddingKernel(const int32_t *ids, const U *table, U *out,
                                int64_t n, int64_t vocab, int64_t rowUnits,
                                DeviceError *errors) {
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const int32_t id = ids[i];
    if (id < 0 || id >= vocab) {
      if (threadIdx.x == 0)
        reportDeviceError(errors, kTokenOutOfRange, i, id, vocab);
      continue;
    }
    const U *src = table + (int64_t)id * rowUnits;
    U *dst = out + i * rowUnits;
    for (int64_t u = threadIdx.x; u < rowUnits; u += blockDim.x)
      dst[u] = src[u];
  }
}

template <typename U>
void launchGather(cudaStream_t stream, const int32_t *ids, const void *table,
                  void *out, int64_t n, int64_t vocab, int64_t rowBytes,
                  DeviceError *errors) {
  embeddingKernel<U>
      <<<(unsigned)std::min<int64_t>(n, kMaxRowBlocks), kGatherThreads, 0,
         stream>>>(ids, static_cast<const U *>(table), static_cast<U *>(out), n,
                   vocab, rowBytes / (int64_t)sizeof(U), errors);
  ZRT_CUDA_CHECK_LAUNCH("zrt_embedding");
}

/// keys[i] = ids[i], or `sentinel` (reported) when outside [0, vocab);
/// positions[i] = i.
__global__ void sortKeysKernel(const int32_t *ids, uint32_t *keys,
                               int64_t *positions, int64_t n, int64_t vocab,
                               uint32_t sentinel, DeviceError *errors) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int32_t id = ids[i];
    bool valid = id >= 0 && id < vocab;
    if (!valid)
      reportDeviceError(errors, kTokenOutOfRange, i, id, vocab);
    keys[i] = valid ? (uint32_t)id : sentinel;
    positions[i] = i;
  }
}

/// One block per run of equal ids in the sorted order (blocks at other
/// indices return at once): dtable[id, c] = sum over the run of
/// dout[position, c], in position order.
template <typename T>
__global__ void accumulateRunsKernel(const uint32_t *keys,
                                     const int64_t *positions, const T *dout,
                                     T *dtable, int64_t n, int64_t dim,
                                     uint32_t sentinel) {
  for (int64_t k = blockIdx.x; k < n; k += gridDim.x) {
    const uint32_t key = keys[k];
    if (key == sentinel || (k > 0 && keys[k - 1] == key))
      continue;
    T *row = dtable + (int64_t)key * dim;
    for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
      float sum = 0.0f;
      for (int64_t j = k; j < n && keys[j] == key; ++j)
        sum += load(dout, positions[j] * dim + c);
      store(row, c, sum);
    }
  }
}

} // namespace

void embedding(zrt_context *ctx, int32_t dtype, const int32_t *ids,
               const void *table, void *out, int64_t n, int64_t vocab,
               int64_t dim) {
  const int64_t rowBytes =
      std::max<int64_t>(dim, 0) * dtypeSize("zrt_embedding", dtype);
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
    Scratch scratch(stream, 2 * keyBytes + 2 * posBytes + cubBytes);
    uint32_t *keysIn = scratch.as<uint32_t>(0);
    uint32_t *keysOut = scratch.as<uint32_t>(keyBytes);
    int64_t *posIn = scratch.as<int64_t>(2 * keyBytes);
    int64_t *posOut = scratch.as<int64_t>(2 * keyBytes + posBytes);
    void *cubTemp = scratch.as<void>(2 * keyBytes + 2 * posBytes);

    sortKeysKernel<<<gridFor(n), kThreads, 0, stream>>>(
        ids, keysIn, posIn, n, vocab, sentinel, deviceErrorSlot(ctx));
    ZRT_CUDA_CHECK_LAUNCH("zrt_embedding_grad");
    if (dim <= 0)
      return;
    ZRT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cubTemp, cubBytes, keysIn,
                                                   keysOut, posIn, posOut, n, 0,
                                                   endBit, stream));
    accumulateRunsKernel<T>
        <<<(unsigned)std::min<int64_t>(n, kMaxRowBlocks), kThreads, 0,
           stream>>>(keysOut, posOut, static_cast<const T *>(dout),
                     static_cast<T *>(dtable), n, dim, sentinel);
    ZRT_CUDA_CHECK_LAUNCH("zrt_embedding_grad");
  });
}

} // namespace zrt::cuda
