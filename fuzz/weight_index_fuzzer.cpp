//===- weight_index_fuzzer.cpp - the sharded checkpoint index reader ------===//
//
// openWeightFiles (runtime/driver/weight_files.cpp) on any
// model.safetensors.index.json, next to one valid shard
// (model-00001-of-00001.safetensors, tensors "h.0.w" and "h.0.b"): the
// index's weight map is checked against the shards it names, never a crash;
// every tensor it then finds lies in a file it read.
//
//===----------------------------------------------------------------------===//
#include "driver/weight_files.h"
#include "file_input.h"

#include <sys/stat.h>


/// A directory of this process's, holding the valid shard.
static std::string shardDirectory() {
  static std::string dir;
  if (!dir.empty())
    return dir;
  const char *tmp = std::getenv("TMPDIR");
  dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/zero-fuzz-index-" +
        std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  // Header {"h.0.w": F32 [2], "h.0.b": F32 [1]} padded to 8 bytes, then data.
  std::string header = R"({"h.0.w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("h.0.b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
  header.resize((header.size() + 7) / 8 * 8, ' ');
  uint64_t length = header.size();
  std::string bytes(reinterpret_cast<const char *>(&length), 8);
  bytes += header + std::string(12, '\0');
  writeFile(dir + "/model-00001-of-00001.safetensors", bytes.data(),
            bytes.size());
  return dir;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string index = shardDirectory() + "/model.safetensors.index.json";
  writeFile(index, data, size);
  zrt::WeightFiles weights;
  if (zrt::openWeightFiles(index, weights).empty())
    for (const char *name : {"h.0.w", "h.0.b", "h.1.w"}) {
      zrt::WeightFiles::Located found = weights.find(name);
      if (found.tensor && !found.file)
        std::abort(); // a tensor without its file
    }
  return 0;
}
