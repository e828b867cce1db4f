//===- memory.cpp - zrt_alloc / zrt_free and the memory ledger ------------===//
//
// The ledger charges the bytes the program asked for (not the rounded-up
// allocation), because that is what the compiler's memory plan predicts and
// what the exit report compares against.
//
// The communication thread allocates and frees collective staging (charged
// when the collective runs) while the main thread allocates, hence the lock.
//
// The memory is the context's backend's (DeviceRuntime: aligned_alloc on
// the CPU, stream-ordered on a GPU), zero-filled by it, and the ledger is
// charged the same on every backend, so the compiler's predictions are
// checked alike on all of them.
//
// A compiled program declares one arena per category, or one that all
// categories share (zero-plan-memory's plan), and places its temporaries in
// them (zrt_alloc_in_arena): one block per arena, so the memory a rank
// holds is the plan, fragmentation included. zrt_alloc serves what has no
// planned place.
//
// The host categories (ZRT_MEM_HOST_*, --offload=optimizer) are host
// memory (DeviceRuntime::allocateHost: pinned on a GPU), with arenas of
// their own beside the device's (shared or not), and the ledger keeps their
// bytes apart from the device's total.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"

#include <algorithm>
#include <cstring>

using namespace zrt;

static void checkCategory(const char *entry, int32_t category) {
  if (category < 0 || category >= ZRT_MEM_NUM_CATEGORIES)
    fatal("%s: invalid memory category %d", entry, category);
}

/// The range a buffer of `bytes` takes: aligned, and never empty, so that a
/// zero-byte buffer still has an address of its own. The plan
/// (zero-plan-memory) counts buffers the same way.
static int64_t slotBytes(int64_t bytes) {
  return std::max<int64_t>(kBufferAlignment, (bytes + kBufferAlignment - 1) /
                                                 kBufferAlignment *
                                                 kBufferAlignment);
}

static void charge(MemoryLedger &ledger, int32_t category, int64_t bytes) {
  ledger.current[category] += bytes;
  ledger.peak[category] =
      std::max(ledger.peak[category], ledger.current[category]);
  if (zrt_mem_category_is_host(category)) {
    ledger.currentHost += bytes;
    ledger.peakHost = std::max(ledger.peakHost, ledger.currentHost);
    return;
  }
  ledger.currentTotal += bytes;
  ledger.peakTotal = std::max(ledger.peakTotal, ledger.currentTotal);
}

extern "C" void *zrt_alloc(zrt_context *ctx, int64_t bytes, int32_t category) {
  checkCategory("zrt_alloc", category);
  if (bytes < 0)
    fatal("zrt_alloc: negative size %lld bytes (category %s)", (long long)bytes,
          categoryName(category));
  // The backend takes a multiple of the alignment; a zero-byte request
  // still gets a unique pointer so that zrt_free can find it.
  int64_t rounded = slotBytes(bytes);
  bool host = zrt_mem_category_is_host(category);
  void *ptr = rounded < bytes ? nullptr
              : host          ? ctx->runtime->allocateHost(rounded)
                              : ctx->runtime->allocate(rounded);
  if (!ptr) {
    std::lock_guard<std::mutex> lock(ctx->memoryMutex);
    fatal("zrt_alloc: out of %s memory allocating %lld bytes (category %s; "
          "%lld bytes already allocated there)",
          host ? "host" : "device", (long long)bytes, categoryName(category),
          (long long)(host ? ctx->ledger.currentHost
                           : ctx->ledger.currentTotal));
  }
  std::lock_guard<std::mutex> lock(ctx->memoryMutex);
  ctx->allocations[ptr] = {bytes, category, /*inArena=*/false, host};
  charge(ctx->ledger, category, bytes);
  return ptr;
}

extern "C" void zrt_declare_arena(zrt_context *ctx, int32_t category,
                                  int64_t bytes) {
  if (category != ZRT_ARENA_SHARED)
    checkCategory("zrt_declare_arena", category);
  zrt_context::Arena &arena = ctx->arenas[category];
  if (arena.bytes)
    fatal("zrt_declare_arena: the %s arena is declared twice",
          arenaName(category));
  if (bytes <= 0)
    fatal("zrt_declare_arena: the %s arena has %lld bytes; expected a "
          "positive size",
          arenaName(category), (long long)bytes);
  // A device temporary has one place: in its category's arena or in the
  // shared one, never a choice between the two. Host arenas are apart.
  bool shared = category == ZRT_ARENA_SHARED;
  for (int other = 0; other <= ZRT_ARENA_SHARED; ++other)
    if (ctx->arenas[other].bytes && !zrt_mem_category_is_host(category) &&
        !zrt_mem_category_is_host(other) &&
        (other == ZRT_ARENA_SHARED) != shared)
      fatal("zrt_declare_arena: the %s arena and the %s arena are both "
            "declared; a program's temporaries share one arena or have one "
            "per category",
            arenaName(category), arenaName(other));
  // Reserved at its first buffer: the program is described before the
  // backend is chosen, and the block must be the backend's memory.
  arena.bytes = bytes;
}

/// The block of `arena` (number `index`), reserved on first use.
static char *arenaBase(zrt_context *ctx, zrt_context::Arena &arena,
                       int32_t index) {
  if (arena.base)
    return arena.base;
  void *base = zrt_mem_category_is_host(index)
                   ? ctx->runtime->allocateHost(slotBytes(arena.bytes))
                   : ctx->runtime->allocateArena(slotBytes(arena.bytes));
  if (!base)
    fatal("zrt_alloc_in_arena: out of memory reserving the %s arena of %lld "
          "bytes (%lld bytes already allocated)",
          arenaName(index), (long long)arena.bytes,
          (long long)ctx->ledger.currentTotal);
  return arena.base = static_cast<char *>(base);
}

/// zrt_alloc_in_arena and its unfilled twin (`op` names the entry in the
/// messages).
static void *allocInArena(zrt_context *ctx, const char *op, int64_t bytes,
                          int32_t category, int64_t offset, bool zeroFill) {
  checkCategory(op, category);
  bool host = zrt_mem_category_is_host(category);
  int32_t index = ctx->arenas[ZRT_ARENA_SHARED].bytes && !host
                      ? ZRT_ARENA_SHARED
                      : category;
  zrt_context::Arena &arena = ctx->arenas[index];
  if (bytes < 0 || offset < 0 || offset % kBufferAlignment ||
      offset + bytes > arena.bytes)
    fatal("%s: %lld bytes at offset %lld are not inside the "
          "%s arena of %lld bytes (zrt_declare_arena), or the offset is not "
          "%lld-byte aligned: the program's memory plan is corrupt",
          op, (long long)bytes, (long long)offset, arenaName(index),
          (long long)arena.bytes, (long long)kBufferAlignment);
  if (bytes % 2)
    fatal("%s: %lld bytes is no whole number of elements", op,
          (long long)bytes);
  char *ptr = arenaBase(ctx, arena, index) + offset;
  // Zero-filled, as zrt_alloc's memory: a packed bucket's padding relies
  // on it. On a device the fill is queued after every earlier kernel, so
  // the range's previous tenant is done with it. (Unfilled, the first
  // kernel's write is queued after them the same way.)
  if (zeroFill) {
    if (host || ctx->runtime->hostAddressable())
      std::memset(ptr, 0, bytes);
    else
      zrt_fill(ctx, ZRT_BF16, ptr, bytes / 2, 0.0f);
  }
  std::lock_guard<std::mutex> lock(ctx->memoryMutex);
  zrt_context::Allocation &slot = ctx->allocations[ptr];
  if (slot.bytes || slot.inArena)
    fatal("%s: offset %lld of the %s arena is still held by "
          "a live buffer: the program's memory plan is corrupt",
          op, (long long)offset, arenaName(index));
  slot = {bytes, category, /*inArena=*/true, host};
  charge(ctx->ledger, category, bytes);
  arena.used =
      std::max(arena.used, std::min(offset + slotBytes(bytes), arena.bytes));
  return ptr;
}

extern "C" void *zrt_alloc_in_arena(zrt_context *ctx, int64_t bytes,
                                    int32_t category, int64_t offset) {
  return allocInArena(ctx, "zrt_alloc_in_arena", bytes, category, offset,
                      /*zeroFill=*/true);
}

extern "C" void *zrt_alloc_in_arena_unfilled(zrt_context *ctx, int64_t bytes,
                                             int32_t category,
                                             int64_t offset) {
  return allocInArena(ctx, "zrt_alloc_in_arena_unfilled", bytes, category,
                      offset, /*zeroFill=*/false);
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
  bool inArena = it->second.inArena, host = it->second.host;
  ctx->allocations.erase(it);
  if (inArena)
    return; // The range goes back to the plan.
  if (host)
    ctx->runtime->releaseHost(ptr);
  else
    ctx->runtime->release(ptr);
}
