//===- agree.h - One verdict on errors only some ranks may see --*- C++ -*-===//
//
// Reading a token file, loading weights or saving them can fail on one rank
// and not on another (a shard's bytes, rank 0's disk). No rank may leave on
// its own while the others wait in a collective, so they first agree.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_AGREE_H
#define ZRT_CORE_AGREE_H

#include "core/context.h"

#include <cstdint>
#include <string>

namespace zrt {

/// Collective over ctx's communicator: every rank passes its own error (""
/// if none) and gets back, on every rank, the error of the lowest rank that
/// has one, or "". Without a communicator, returns `error`.
std::string agreeOnError(zrt_context *ctx, const std::string &error);

/// A hash of what the program declared: its header, every argument (name,
/// role, dtype, shape, sharding, init) and its arenas. Two executables of
/// different models, stages, world sizes or batch shapes hash differently.
uint64_t programHash(const zrt_context *ctx);

/// Collective: "" when every rank declared the same program (programHash),
/// else, on every rank, an error naming the ranks whose program differs
/// from rank 0's. Without a communicator, "".
std::string checkSameProgram(zrt_context *ctx);

} // namespace zrt

#endif // ZRT_CORE_AGREE_H
