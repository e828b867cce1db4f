//===- checkpoint_dir.h - One job a checkpoint directory --------*- C++ -*-===//
//
// --checkpoint-dir belongs to one job at a time. At start rank 0 takes an
// exclusive flock on DIR/.lock (the kernel releases it when the process
// ends, however it ends, so a crashed job leaves no stale lock) and writes
// the job's identity into it; a second job on the same directory is refused
// with the holder named. Holding the lock, rank 0 removes what an earlier
// job's crash left: the partial checkpoints (step-NNNNNNNN.tmp/, a
// latest.tmp), which --keep does not count and nothing else would remove.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_CHECKPOINT_DIR_H
#define ZRT_DRIVER_CHECKPOINT_DIR_H

#include "core/context.h"

#include <string>

namespace zrt {

/// Collective. Creates `dir` if needed and claims it for this job for the
/// rest of the process's life, then removes the partial checkpoints an
/// earlier job left, saying in one line what it removed and how many
/// bytes. Returns "" or, on every rank, the same error (the directory held
/// by another job, named; or one that cannot be created).
std::string claimCheckpointDir(zrt_context *ctx, const std::string &dir);

} // namespace zrt

#endif // ZRT_DRIVER_CHECKPOINT_DIR_H
