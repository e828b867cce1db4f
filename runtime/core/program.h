//===- program.h - Checking and materialising a declared program -*- C++
//-*-===//
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

/// Allocates one buffer per declared argument and initialises parameters
/// (moments, data, lr and step buffers start zeroed).
std::vector<void *> allocateArgs(zrt_context *ctx, uint64_t seed);

/// Rows of the global batch that each rank processes.
int64_t localBatch(const zrt_context *ctx);

} // namespace zrt

#endif // ZRT_CORE_PROGRAM_H
