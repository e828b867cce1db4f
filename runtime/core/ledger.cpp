//===- ledger.cpp - The exit report: memory, traffic, throughput ----------===//

#include "core/ledger.h"
#include "core/check.h"

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace zrt {

static int64_t maxOverRanks(zrt_context *ctx, int64_t value) {
  int64_t result = value;
  ZRT_MPI_CHECK(
      MPI_Reduce(&value, &result, 1, MPI_INT64_T, MPI_MAX, 0, ctx->comm));
  return result;
}

void printLedger(zrt_context *ctx) {
  quiesceComm(ctx);
  const MemoryLedger &ledger = ctx->ledger;
  std::vector<int64_t> values;
  for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
    values.push_back(maxOverRanks(ctx, ledger.peak[c]));
  values.push_back(maxOverRanks(ctx, ledger.peakTotal));
  // --offload=optimizer: host memory and the copies, shown when used.
  int64_t peakHost = maxOverRanks(ctx, ledger.peakHost);
  std::array<int64_t, 2> offloadBytes{};
  for (int d = 0; d < 2; ++d)
    offloadBytes[d] = maxOverRanks(ctx, ledger.offloadBytes[d]);
  for (int k = 0; k < NumCollectiveKinds; ++k)
    values.push_back(maxOverRanks(ctx, ctx->collectives.bytes[k]));
  // Hybrid sharding: the same bytes again, by the group they moved over.
  bool byGroup = ctx->program.shardGroups;
  std::vector<int64_t> groupBytes;
  for (int g = 0; byGroup && g < ZRT_NUM_GROUPS; ++g)
    groupBytes.push_back(maxOverRanks(ctx, ctx->collectives.groupBytes[g]));
  // The compiler's arenas: reserved (the plan) and the highest byte used.
  std::vector<int64_t> reserved, used;
  for (int c = 0; c <= ZRT_ARENA_SHARED; ++c) {
    reserved.push_back(maxOverRanks(ctx, ctx->arenas[c].bytes));
    used.push_back(maxOverRanks(ctx, ctx->arenas[c].used));
  }
  // A device backend's own memory (GEMM workspace, scratch) is none of the
  // compiler's categories: shown apart, so that those stay comparable with
  // its predictions. Every rank runs the same backend, so all reduce or none
  // (the CPU has no parts).
  std::vector<DeviceRuntime::WorkspacePart> workspace =
      ctx->runtime->workspaceParts();
  for (DeviceRuntime::WorkspacePart &part : workspace)
    part.bytes = maxOverRanks(ctx, part.bytes);
  if (ctx->rank != 0)
    return;
  std::printf("memory and traffic per rank (max over %d ranks):\n",
              ctx->worldSize);
  for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
    if (!zrt_mem_category_is_host(c))
      std::printf("memory peak %s: %lld bytes\n", categoryName(c),
                  (long long)values[c]);
  std::printf("memory peak total: %lld bytes\n",
              (long long)values[ZRT_MEM_NUM_CATEGORIES]);
  if (peakHost) {
    for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
      if (zrt_mem_category_is_host(c))
        std::printf("memory peak %s: %lld bytes\n", categoryName(c),
                    (long long)values[c]);
    std::printf("memory peak host total: %lld bytes (not in the total)\n",
                (long long)peakHost);
    static const char *const directions[2] = {"to_host", "to_device"};
    for (int d = 0; d < 2; ++d)
      std::printf("offload %s: %lld bytes in %lld calls\n", directions[d],
                  (long long)offloadBytes[d],
                  (long long)ledger.offloadCalls[d]);
  }
  for (int c = 0; c <= ZRT_ARENA_SHARED; ++c)
    if (reserved[c])
      std::printf("memory arena %s: %lld bytes reserved, %lld used\n",
                  arenaName(c), (long long)reserved[c], (long long)used[c]);
  if (!workspace.empty()) {
    int64_t total = 0;
    std::string parts;
    for (const DeviceRuntime::WorkspacePart &part : workspace) {
      total += part.bytes;
      parts += std::string(parts.empty() ? "" : ", ") + part.name + " " +
               std::to_string(part.bytes);
    }
    std::printf("memory runtime workspace: %lld bytes (device backend, not "
                "in the categories above: %s)\n",
                (long long)total, parts.c_str());
  }
  int64_t total = 0;
  for (int k = 0; k < NumCollectiveKinds; ++k) {
    int64_t bytes = values[ZRT_MEM_NUM_CATEGORIES + 1 + k];
    total += bytes;
    std::printf("comm %s: %lld bytes in %lld calls\n", collectiveName(k),
                (long long)bytes, (long long)ctx->collectives.calls[k]);
  }
  std::printf("comm total: %lld bytes\n", (long long)total);
  for (int g = 0; byGroup && g < ZRT_NUM_GROUPS; ++g)
    std::printf("comm group %s: %lld bytes in %lld calls\n", groupName(g),
                (long long)groupBytes[g],
                (long long)ctx->collectives.groupCalls[g]);
}

void printThroughput(const zrt_context *ctx, int64_t steps, double seconds) {
  std::printf("time per step: %.3f ms (rank 0, %lld steps)\n",
              seconds * 1e3 / steps, (long long)steps);
  const ProgramDesc &p = ctx->program;
  int64_t sequences = p.globalBatch * p.microBatches;
  if (p.task == ZRT_TASK_LM && seconds > 0)
    std::printf("tokens per second: %.0f (%lld x %lld tokens per step, all "
                "ranks)\n",
                (double)(steps * sequences * p.seqLen) / seconds,
                (long long)sequences, (long long)p.seqLen);
}

} // namespace zrt
