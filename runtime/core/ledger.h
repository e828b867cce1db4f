//===- ledger.h - The exit report: memory, traffic, throughput --*- C++ -*-===//
#ifndef ZRT_CORE_LEDGER_H
#define ZRT_CORE_LEDGER_H

#include "core/context.h"

namespace zrt {

/// Collective: prints, on rank 0, each category's peak bytes and the bytes
/// each collective kind moved, as the maximum over ranks (the rank that
/// needs the most memory decides whether the job fits); with shard groups
/// also the bytes each group moved ("comm group world|shard|replica").
void printLedger(zrt_context *ctx);

/// Rank 0: the time per step and, for LM programs, tokens per second.
void printThroughput(const zrt_context *ctx, int64_t steps, double seconds);

} // namespace zrt

#endif // ZRT_CORE_LEDGER_H
