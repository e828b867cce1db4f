//===- weight_files.h - The safetensors files of --init-from ----*- C++ -*-===//
//
// --init-from names one of:
//  - a .safetensors file;
//  - a transformers sharded-checkpoint index (model.safetensors.index.json:
//    {"metadata": {...}, "weight_map": {tensor name: file beside the index}});
//  - a directory holding model.safetensors.index.json or model.safetensors
//    (what save_pretrained writes).
// WeightFiles reads and checks the header of every file it names and finds
// each tensor in the one file the index assigns it to.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_WEIGHT_FILES_H
#define ZRT_DRIVER_WEIGHT_FILES_H

#include "driver/safetensors.h"

#include <map>
#include <string>
#include <vector>

namespace zrt {

struct WeightFiles {
  std::vector<SafeTensorsFile> files;

  struct Located {
    const SafeTensorsFile *file = nullptr;
    const SafeTensor *tensor = nullptr;
  };
  /// The tensor named `name`, and its file; {nullptr, nullptr} if none.
  Located find(const std::string &name) const;
  /// What --init-from named, for messages.
  std::string source;

private:
  friend std::string openWeightFiles(const std::string &, WeightFiles &);
  std::map<std::string, Located> byName;
};

/// Resolves `path` as above and reads every header. Returns "" or a message
/// naming the file (and the tensor, when one is at fault).
std::string openWeightFiles(const std::string &path, WeightFiles &out);

} // namespace zrt

#endif // ZRT_DRIVER_WEIGHT_FILES_H
