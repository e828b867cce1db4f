//===- checkpoint.h - Loading and saving parameters -------------*- C++ -*-===//
//
// --init-from loads every PARAM and MASTER by name, each rank reading only
// its own shard from the file, so memory stays sharded. --save gathers each
// parameter to rank 0 a bounded chunk at a time and writes one ordinary
// safetensors file, through a temporary file and a rename so that an
// existing checkpoint survives any failure.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_CHECKPOINT_H
#define ZRT_DRIVER_CHECKPOINT_H

#include "core/context.h"

#include <string>
#include <vector>

namespace zrt {

/// Collective. Fills the PARAM and MASTER buffers from `path` (a
/// .safetensors file, a transformers model.safetensors.index.json, or a
/// directory with either: see weight_files.h), converting F32, BF16 and F16
/// to the buffer's dtype; a name is looked up as is, then with Hugging Face
/// GPT-2's "transformer." prefix.
/// Returns "" or, on every rank, the same error. `unused` receives a warning
/// naming tensors of the file that the program does not have ("" if none).
std::string loadParams(zrt_context *ctx, const std::vector<void *> &buffers,
                       const std::string &path, std::string &unused);

/// Collective. Writes every parameter (its float32 MASTER when it has one)
/// to `path` on rank 0. Returns "" or, on every rank, the same error.
std::string saveParams(zrt_context *ctx, const std::vector<void *> &buffers,
                       const std::string &path);

/// Collective. --export-hf: `dir`/model.safetensors (as saveParams) and
/// `dir`/config.json (the program's declared Hugging Face config), each
/// written through a temporary file and a rename. Returns "" or, on every
/// rank, the same error.
std::string exportHuggingFace(zrt_context *ctx,
                              const std::vector<void *> &buffers,
                              const std::string &dir);

} // namespace zrt

#endif // ZRT_DRIVER_CHECKPOINT_H
