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

#include <string>

namespace zrt {

/// Collective over ctx's communicator: every rank passes its own error (""
/// if none) and gets back, on every rank, the error of the lowest rank that
/// has one, or "". Without a communicator, returns `error`.
std::string agreeOnError(zrt_context *ctx, const std::string &error);

} // namespace zrt

#endif // ZRT_CORE_AGREE_H
