//===- core_checks.h - Checks of the runtime's core services ----*- C++ -*-===//
#ifndef ZRT_TESTS_CORE_CHECKS_H
#define ZRT_TESTS_CORE_CHECKS_H

#include "tests/checker.h"

namespace zrt {

/// zrt_alloc / zrt_free: alignment, zero fill, the ledger's current and peak.
void checkAllocator(Checker &check);
void checkSharedArena(Checker &check);
/// --offload=optimizer's entries: host memory, the copies, host AdamW.
void checkOffloadEntries(Checker &check);
/// Parameter init (shards equal the full tensor, distributions) and the
/// synthetic data (independent of how the batch is split).
void checkInitAndData(Checker &check);

} // namespace zrt

#endif // ZRT_TESTS_CORE_CHECKS_H
