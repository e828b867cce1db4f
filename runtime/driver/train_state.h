//===- train_state.h - Checkpoints of the whole training state --*- C++ -*-===//
//
// --checkpoint-dir / --checkpoint-every / --keep write, and --resume reads,
// everything a run needs to continue exactly: every parameter, float32
// master, Adam moment and gradient accumulator, with the step (which fixes
// the learning rate), the seed, and a language model's data position (the
// token the next step starts at, and the stream's length).
//
// Layout of one checkpoint, DIR/step-NNNNNNNN/:
//   rank-RRRRR.safetensors  what rank R holds: its shard of every sharded
//                           tensor ([S] elements, S = ceil(N / G), the last
//                           shard zero-padded), and on rank 0 every
//                           replicated tensor whole; tensors are named
//                           "<role>/<name>" ("adam_m/h.0.mlp.c_fc.weight").
//                           G is the shard group size (zrt_declare_shard_
//                           groups; the world size W without): only ranks 0
//                           to G - 1 store shards, the other groups' files
//                           (copies of the same shards) hold no tensor
//   index.json              the model (a hash of the parameter list), stage,
//                           world size, shard group size (G; absent in
//                           checkpoints older than hybrid sharding: W),
//                           step, seed, the data position ("data":
//                           {"tokens", "next_token"}; a language model's,
//                           absent in older checkpoints), every tensor's
//                           whole shape, dtype
//                           and layout, and the SHA-256 and size of every
//                           file and every tensor
// DIR/latest names the newest complete checkpoint.
//
// Writing is atomic: every rank writes and fsyncs its file into
// step-NNNNNNNN.tmp/, rank 0 then writes the index, renames the directory
// and only then updates `latest`; the previous checkpoint stays whole until
// the new one is complete, and --keep=N removes the oldest after that. No
// rank gathers the model: each rank of the first shard group writes 1/G of
// the sharded state.
//
// Loading reshards: a checkpoint written at stage S on W ranks in shard
// groups of G loads at any stage on any number of ranks, with or without
// shard groups of any size. Each rank reads, for every tensor, the element
// range its buffer holds, from whichever files hold it.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_TRAIN_STATE_H
#define ZRT_DRIVER_TRAIN_STATE_H

#include "core/context.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zrt {

/// Where a run stands: what a checkpoint records besides the tensors.
struct TrainPosition {
  int64_t step = 0; // optimizer steps completed
  uint64_t seed = 0;
  /// A language model's data: the tokens of its training stream, and the
  /// token the next step starts at (-1: a classifier, or a checkpoint
  /// written before they were recorded).
  int64_t dataTokens = -1;
  int64_t dataNextToken = -1;
};

/// Collective. Writes the training state after `position.step` steps into
/// `dir`/step-NNNNNNNN, then keeps the newest `keep` checkpoints (0: all).
/// Returns "" and sets `bytes` to the size of all ranks' files, or, on
/// every rank, the same error; on an error nothing that was complete before
/// is touched.
std::string saveTrainState(zrt_context *ctx, const std::vector<void *> &buffers,
                           const std::string &dir,
                           const TrainPosition &position, int64_t keep,
                           int64_t &bytes);

/// Collective. Resolves `path` (a checkpoint directory, or a directory
/// whose `latest` names one) and fills every state buffer from it,
/// resharding to this program's stage and world size. Returns "" and sets
/// `position` and `resolved` (the checkpoint read), or, on every rank, the
/// same error naming the file and tensor at fault.
std::string loadTrainState(zrt_context *ctx, const std::vector<void *> &buffers,
                           const std::string &path, TrainPosition &position,
                           std::string &resolved);

/// Whether `dir` holds a complete checkpoint to resume from (a `latest`).
bool hasCheckpoint(const std::string &dir);

} // namespace zrt

#endif // ZRT_DRIVER_TRAIN_STATE_H
