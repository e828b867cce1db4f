//===- program.h - Checking and materialising a program ---------*- C++ -*-===//
#ifndef ZRT_CORE_PROGRAM_H
#define ZRT_CORE_PROGRAM_H

#include "core/context.h"

#include <string>
#include <vector>

namespace zrt {

/// Checks what zero_program_describe declared against this runtime and job.
/// Returns "" when the program can run, else a one-line message. Depends
/// only on the declarations and the world size, so every rank agrees.
std::string validateProgram(const zrt_context *ctx);

/// Rows (CLASSIFY) or sequences (LM) of the global batch each rank processes.
int64_t localBatch(const zrt_context *ctx);

/// "param", "adam_m", ...: how messages name a zrt_role.
const char *roleName(int32_t role);

/// The elements of a (validated) argument's whole tensor that this rank's
/// buffer holds: [first, first + count) of the tensor padded to G*S, where
/// a sharded argument has G = shardCount shards of S = ceil(numel / G) and
/// this rank holds shard shardIndex.
struct ArgSlice {
  int64_t first;
  int64_t count;
};
ArgSlice argSlice(const zrt_context *ctx, const ArgDesc &arg);

/// Bytes of one element of the buffer of `arg` (int32 roles are 4 bytes).
int64_t elementBytes(const ArgDesc &arg);

/// The PARAM a MASTER mirrors (or the PARAM itself), by name; -1 if none.
int64_t findParam(const zrt_context *ctx, const std::string &name);
/// The MASTER of the PARAM named `name`, or -1.
int64_t findMaster(const zrt_context *ctx, const std::string &name);

/// "[2, 3]": a shape as messages print it.
std::string shapeString(const int64_t *dims, int64_t rank);

/// Allocates one zero-filled buffer per declared argument, charged to the
/// ledger category of its role.
std::vector<void *> allocateArgs(zrt_context *ctx);

/// Initialises every PARAM and MASTER from the counter-based generator; a
/// MASTER takes its PARAM's init, so both hold the same values.
void initParams(zrt_context *ctx, const std::vector<void *> &buffers,
                uint64_t seed);

} // namespace zrt

#endif // ZRT_CORE_PROGRAM_H
