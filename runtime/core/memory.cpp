//===- memory.cpp - zrt_alloc / zrt_free and the memory ledger ------------===//
//
// The ledger charges the bytes the program asked for (not the rounded-up
// allocation), because that is what the compiler's memory plan predicts and
// what the exit report compares against.
//
// The communication thread allocates and frees collective staging (charged
// when the collective runs) while the main thread allocates, hence the lock.
//
// On a device (core/device.h) the memory is the backend's, zero-filled by
// it, and the ledger is charged exactly as on the CPU, so the compiler's
// predictions are checked alike on both backends.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace zrt;

static constexpr int64_t kAlignment = 64;

static void charge(MemoryLedger &ledger, int32_t category, int64_t bytes) {
  ledger.current[category] += bytes;
  ledger.currentTotal += bytes;
  ledger.peak[category] =
      std::max(ledger.peak[category], ledger.current[category]);
  ledger.peakTotal = std::max(ledger.peakTotal, ledger.currentTotal);
}

extern "C" void *zrt_alloc(zrt_context *ctx, int64_t bytes, int32_t category) {
  if (category < 0 || category >= ZRT_MEM_NUM_CATEGORIES)
    fatal("zrt_alloc: invalid memory category %d", category);
  if (bytes < 0)
    fatal("zrt_alloc: negative size %lld bytes (category %s)", (long long)bytes,
          categoryName(category));
  // aligned_alloc needs a multiple of the alignment; a zero-byte request
  // still gets a unique pointer so that zrt_free can find it.
  int64_t rounded = std::max<int64_t>(kAlignment, (bytes + kAlignment - 1) /
                                                      kAlignment * kAlignment);
  // On a device, the backend's allocator (zero-filled device memory).
  DeviceRuntime *device = ctx->deviceRuntime.get();
  void *ptr = rounded < bytes ? nullptr
              : device        ? device->allocate(rounded)
                              : std::aligned_alloc(kAlignment, rounded);
  if (!ptr) {
    std::lock_guard<std::mutex> lock(ctx->memoryMutex);
    fatal("zrt_alloc: out of memory allocating %lld bytes (category %s; "
          "%lld bytes already allocated)",
          (long long)bytes, categoryName(category),
          (long long)ctx->ledger.currentTotal);
  }
  if (!device)
    std::memset(ptr, 0, rounded);
  std::lock_guard<std::mutex> lock(ctx->memoryMutex);
  ctx->allocations[ptr] = {bytes, category};
  charge(ctx->ledger, category, bytes);
  return ptr;
}

extern "C" void zrt_free(zrt_context *ctx, void *ptr) {
  if (!ptr)
    return;
  std::unique_lock<std::mutex> lock(ctx->memoryMutex);
  auto it = ctx->allocations.find(ptr);
  if (it == ctx->allocations.end())
    fatal("zrt_free: %p was not returned by zrt_alloc (or was freed twice)",
          ptr);
  charge(ctx->ledger, it->second.category, -it->second.bytes);
  ctx->allocations.erase(it);
  if (ctx->deviceRuntime)
    ctx->deviceRuntime->release(ptr);
  else
    std::free(ptr);
}
