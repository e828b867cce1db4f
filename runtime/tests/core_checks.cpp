//===- core_checks.cpp - Allocator, parameter init and synthetic data -----===//

#include "tests/core_checks.h"
#include "core/context.h"
#include "core/init.h"
#include "driver/data.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace zrt {

void checkAllocator(Checker &check) {
  zrt_context *ctx = createLocalContext();
  auto *a = (unsigned char *)zrt_alloc(ctx, 1000, ZRT_MEM_PARAM);
  auto *b = (unsigned char *)zrt_alloc(ctx, 300, ZRT_MEM_ACTIVATION);
  bool zeroed = true;
  for (int i = 0; i < 1000; ++i)
    zeroed &= a[i] == 0;
  check.expectTrue("alloc 64-byte aligned",
                   (uintptr_t)a % 64 == 0 && (uintptr_t)b % 64 == 0);
  check.expectTrue("alloc zero-filled", zeroed);
  zrt_free(ctx, b);
  void *c = zrt_alloc(ctx, 100, ZRT_MEM_ACTIVATION);
  zrt_free(ctx, nullptr);
  const MemoryLedger &l = ctx->ledger;
  check.expectTrue("ledger current and peak per category",
                   l.current[ZRT_MEM_PARAM] == 1000 &&
                       l.current[ZRT_MEM_ACTIVATION] == 100 &&
                       l.peak[ZRT_MEM_ACTIVATION] == 300 &&
                       l.peakTotal == 1300 && l.currentTotal == 1100);
  zrt_free(ctx, c);
  zrt_free(ctx, a);
  check.expectTrue("ledger back to zero after free",
                   l.currentTotal == 0 && ctx->allocations.empty());

  // An arena: placed buffers are the block plus their offset, zero-filled
  // again when a range is reused, charged like zrt_alloc, and the range
  // used is tracked (in 64-byte slots, as the plan counts).
  zrt_declare_arena(ctx, ZRT_MEM_GRAD, 1000);
  check.expectTrue("an arena is reserved at its first buffer",
                   ctx->arenas[ZRT_MEM_GRAD].base == nullptr);
  auto *x = (unsigned char *)zrt_alloc_in_arena(ctx, 200, ZRT_MEM_GRAD, 0);
  char *base = ctx->arenas[ZRT_MEM_GRAD].base;
  auto *y = (unsigned char *)zrt_alloc_in_arena(ctx, 100, ZRT_MEM_GRAD, 256);
  check.expectTrue("arena buffers at their offsets",
                   (char *)x == base && (char *)y == base + 256);
  std::fill(x, x + 200, 0xab);
  check.expectTrue("arena charges the ledger",
                   l.current[ZRT_MEM_GRAD] == 300 &&
                       ctx->arenas[ZRT_MEM_GRAD].used == 384);
  zrt_free(ctx, x);
  auto *z = (unsigned char *)zrt_alloc_in_arena(ctx, 128, ZRT_MEM_GRAD, 0);
  check.expectTrue("a reused arena range is zero-filled",
                   std::all_of(z, z + 128, [](unsigned char v) { return v == 0; }));
  // Unfilled (zero-elide-zero-fills): the range keeps what it held, and
  // the buffer is charged and freed as any other.
  std::fill(z, z + 128, 0xcd);
  zrt_free(ctx, z);
  z = (unsigned char *)zrt_alloc_in_arena_unfilled(ctx, 128, ZRT_MEM_GRAD, 0);
  check.expectTrue("an unfilled arena range keeps its bytes and is charged",
                   (char *)z == base &&
                       std::all_of(z, z + 128,
                                   [](unsigned char v) { return v == 0xcd; }) &&
                       l.current[ZRT_MEM_GRAD] == 228);
  zrt_free(ctx, y);
  zrt_free(ctx, z);
  check.expectTrue("arena frees give the range back, not the block",
                   l.current[ZRT_MEM_GRAD] == 0 &&
                       ctx->arenas[ZRT_MEM_GRAD].base == base);
  destroyContext(ctx);
}

void checkOffloadEntries(Checker &check) {
  // The host categories: host memory, never an arena, apart from the
  // device's total; the copies count bytes and calls each way; the host
  // AdamW equals the backend's on random data.
  zrt_context *ctx = createLocalContext();
  const MemoryLedger &l = ctx->ledger;
  const int64_t n = 1000;
  auto *device = (float *)zrt_alloc(ctx, n * 4, ZRT_MEM_GRAD);
  auto *host = (float *)zrt_alloc(ctx, n * 4, ZRT_MEM_HOST_STAGING);
  check.expectTrue("host alloc: 64-byte aligned, zero-filled, host memory",
                   (uintptr_t)host % 64 == 0 && host[0] == 0 &&
                       host[n - 1] == 0 && ctx->allocations[host].host);
  check.expectTrue("host alloc: charged apart from the device total",
                   l.current[ZRT_MEM_HOST_STAGING] == n * 4 &&
                       l.currentHost == n * 4 && l.currentTotal == n * 4 &&
                       l.peakHost == n * 4);
  uint64_t seed = 7;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return float((seed >> 40) % 2001) / 1000.0f - 1.0f;
  };
  for (int64_t i = 0; i < n; ++i)
    device[i] = next();
  zrt_copy_to_host(ctx, device, host, n * 4);
  bool copied = std::equal(device, device + n, host);
  std::fill(device, device + n, 0.0f);
  zrt_copy_to_device(ctx, host, device, 100 * 4);
  check.expectTrue("offload copies: the bytes arrive each way",
                   copied && device[99] == host[99] && device[100] == 0.0f);
  check.expectTrue("offload copies: counted in the ledger",
                   l.offloadBytes[0] == n * 4 && l.offloadCalls[0] == 1 &&
                       l.offloadBytes[1] == 400 && l.offloadCalls[1] == 1);
  // zrt_host_adamw against zrt_adamw on the same random state.
  std::vector<float> p(n), g(n), m(n), v(n);
  for (int64_t i = 0; i < n; ++i) {
    p[i] = next();
    g[i] = next();
    m[i] = next() * 0.1f;
    v[i] = std::fabs(next()) * 0.01f;
  }
  std::vector<float> p2 = p, m2 = m, v2 = v;
  float lr = 0.003f, step = 3, beta1 = 0.8f, beta2 = 0.95f, eps = 1e-6f,
        decay = 0.05f, scale = 0.5f;
  zrt_adamw(ctx, ZRT_F32, p.data(), g.data(), m.data(), v.data(), p.data(),
            m.data(), v.data(), n, &lr, &step, &scale, &beta1, &beta2, &eps,
            &decay);
  zrt_host_adamw(ctx, ZRT_F32, p2.data(), g.data(), m2.data(), v2.data(),
                 p2.data(), m2.data(), v2.data(), n, &lr, &step, &scale,
                 &beta1, &beta2, &eps, &decay);
  check.expectTrue("zrt_host_adamw equals zrt_adamw bit for bit",
                   p == p2 && m == m2 && v == v2);
  std::vector<uint16_t> bf(n), bf2(n);
  zrt_cast(ctx, ZRT_F32, ZRT_BF16, p.data(), bf.data(), n);
  zrt_host_cast(ctx, ZRT_F32, ZRT_BF16, p.data(), bf2.data(), n);
  check.expectTrue("zrt_host_cast equals zrt_cast", bf == bf2);
  zrt_free(ctx, host);
  zrt_free(ctx, device);
  check.expectTrue("host free: the ledger back to zero",
                   l.currentHost == 0 && l.currentTotal == 0 &&
                       ctx->allocations.empty());
  destroyContext(ctx);

  // A host arena beside the shared one: host temporaries go to their own
  // block, zero-filled on reuse, charged to host memory.
  ctx = createLocalContext();
  zrt_declare_arena(ctx, ZRT_ARENA_SHARED, 512);
  zrt_declare_arena(ctx, ZRT_MEM_HOST_STAGING, 256);
  auto *hostTemp =
      (float *)zrt_alloc_in_arena(ctx, 128, ZRT_MEM_HOST_STAGING, 128);
  void *deviceTemp = zrt_alloc_in_arena(ctx, 128, ZRT_MEM_GRAD, 128);
  char *hostBase = ctx->arenas[ZRT_MEM_HOST_STAGING].base;
  check.expectTrue("host arena: its own block beside the shared one",
                   hostBase && (char *)hostTemp == hostBase + 128 &&
                       (char *)deviceTemp ==
                           ctx->arenas[ZRT_ARENA_SHARED].base + 128);
  check.expectTrue("host arena: charged to host memory",
                   ctx->ledger.currentHost == 128 &&
                       ctx->ledger.currentTotal == 128 &&
                       ctx->arenas[ZRT_MEM_HOST_STAGING].used == 256);
  hostTemp[0] = 3.0f;
  zrt_free(ctx, hostTemp);
  hostTemp = (float *)zrt_alloc_in_arena(ctx, 128, ZRT_MEM_HOST_STAGING, 128);
  check.expectTrue("host arena: a reused range is zero-filled",
                   hostTemp[0] == 0.0f);
  zrt_free(ctx, hostTemp);
  zrt_free(ctx, deviceTemp);
  destroyContext(ctx);
}

void checkSharedArena(Checker &check) {
  // The shared arena: buffers of different categories take turns in one
  // range, each charged to its own category.
  zrt_context *ctx = createLocalContext();
  zrt_declare_arena(ctx, ZRT_ARENA_SHARED, 512);
  void *grad = zrt_alloc_in_arena(ctx, 256, ZRT_MEM_GRAD, 0);
  void *act = zrt_alloc_in_arena(ctx, 200, ZRT_MEM_ACTIVATION, 256);
  char *base = ctx->arenas[ZRT_ARENA_SHARED].base;
  const MemoryLedger &l = ctx->ledger;
  check.expectTrue("shared arena: every category at its offset in one block",
                   base && grad == base && act == base + 256 &&
                       l.current[ZRT_MEM_GRAD] == 256 &&
                       l.current[ZRT_MEM_ACTIVATION] == 200 &&
                       !ctx->arenas[ZRT_MEM_GRAD].base &&
                       !ctx->arenas[ZRT_MEM_ACTIVATION].base);
  zrt_free(ctx, grad);
  void *comm = zrt_alloc_in_arena(ctx, 128, ZRT_MEM_COMM, 0);
  check.expectTrue("shared arena: a freed range holds another category",
                   comm == base && l.current[ZRT_MEM_COMM] == 128 &&
                       l.current[ZRT_MEM_GRAD] == 0 &&
                       ctx->arenas[ZRT_ARENA_SHARED].used == 512);
  zrt_free(ctx, comm);
  zrt_free(ctx, act);
  destroyContext(ctx);
}

void checkInitAndData(Checker &check) {
  // The full tensor made at once equals its three shards made apart.
  const int64_t numel = 20, s = 7;
  std::vector<float> full(numel), sharded(3 * s);
  initParamSlice("w", ZRT_INIT_UNIFORM, 0.5f, 7, numel, 0, numel, full.data());
  for (int r = 0; r < 3; ++r)
    initParamSlice("w", ZRT_INIT_UNIFORM, 0.5f, 7, numel, r * s, s,
                   sharded.data() + r * s);
  bool same = std::equal(full.begin(), full.end(), sharded.begin());
  bool padded = sharded[20] == 0.0f;
  bool inRange = true;
  for (float x : full)
    inRange &= x >= -0.5f && x < 0.5f;
  check.expectTrue("init shards equal the full tensor, padding zero",
                   same && padded && inRange);

  std::vector<float> normal(20000);
  initParamSlice("n", ZRT_INIT_NORMAL, 2.0f, 7, 20000, 0, 20000, normal.data());
  double mean = 0, var = 0;
  for (float x : normal)
    mean += x / 20000.0;
  for (float x : normal)
    var += (x - mean) * (x - mean) / 20000.0;
  // Standard errors: 0.014 for the mean, ~0.04 for the variance of 4.
  check.expectClose("init normal(0, 2^2) mean", std::fabs(mean), 0.05);
  check.expectClose("init normal(0, 2^2) variance", std::fabs(var - 4.0), 0.2);

  SyntheticData data(1234, 10, 5);
  std::vector<float> x1(24 * 10), x2(24 * 10);
  std::vector<int32_t> y1(24), y2(24);
  data.fill(48, 24, x1.data(), y1.data());
  data.fill(48, 12, x2.data(), y2.data());
  data.fill(60, 12, x2.data() + 120, y2.data() + 12);
  std::vector<int> classCount(5, 0);
  for (int32_t y : y1)
    classCount[y] += 1;
  int used = 0;
  for (int count : classCount)
    used += count > 0;
  check.expectTrue("data: two half batches equal one batch",
                   x1 == x2 && y1 == y2);
  check.expectTrue("data: labels use at least 3 of 5 classes", used >= 3);
}

} // namespace zrt
