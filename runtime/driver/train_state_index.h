//===- train_state_index.h - The index of a training-state checkpoint -*- C++
//-*-===//
//
// index.json of a checkpoint (train_state.h): read apart from the tensors so
// that the reader of this untrusted file is small and fuzzed on its own
// (fuzz/train_state_index_fuzzer.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_TRAIN_STATE_INDEX_H
#define ZRT_DRIVER_TRAIN_STATE_INDEX_H

#include "driver/train_state.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zrt {

inline constexpr int kTrainStateFormatVersion = 1;
inline constexpr const char *kTrainStateFormat = "zero-opt-train-state";

/// "rank-00003.safetensors": the file of rank 3.
inline std::string rankFileName(int rank) {
  char name[40];
  std::snprintf(name, sizeof(name), "rank-%05d.safetensors", rank);
  return name;
}

/// One tensor as the index describes it.
struct IndexTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  bool sharded = false;
};

/// What a rank needs of a checkpoint's index.json.
struct TrainStateIndex {
  std::string path; // the checkpoint directory
  std::string model;
  int64_t stage = 0, worldSize = 0;
  /// The ranks a sharded tensor is sharded over: shard k is in the file of
  /// rank k (k < shardGroupSize). The world size when the index has no
  /// "shard_group_size" (written before hybrid sharding) or the program no
  /// shard groups.
  int64_t shardGroupSize = 0;
  TrainPosition position;
  std::map<std::string, IndexTensor> tensors;
  struct File {
    int64_t bytes = 0;
    std::string sha256;
    std::map<std::string, std::string> tensorSha256;
  };
  std::map<std::string, File> files;
};

/// Parses and checks `text`, the index.json at `where` (for messages):
/// every field present and well formed (shard_group_size may be absent: the
/// world size), and a file for every rank of the world size it states. Returns
/// "" or the problem, naming `where`. Leaves `index.path` alone.
std::string parseTrainStateIndex(const std::string &text,
                                 const std::string &where,
                                 TrainStateIndex &index);

} // namespace zrt

#endif // ZRT_DRIVER_TRAIN_STATE_INDEX_H
