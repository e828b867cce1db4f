//===- train_state_index_fuzzer.cpp - the training-state index reader -----===//
//
// parseTrainStateIndex (runtime/driver/train_state_index.cpp) on any text:
// never a crash or a hang; an index it accepts states a world size of at
// least 1 with a file entry for every rank.
//
//===----------------------------------------------------------------------===//
#include "driver/train_state_index.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  zrt::TrainStateIndex index;
  if (!zrt::parseTrainStateIndex(text, "index.json", index).empty())
    return 0;
  if (index.worldSize < 1)
    std::abort();
  for (int r = 0; r < index.worldSize; ++r)
    if (!index.files.count(zrt::rankFileName(r)))
      std::abort(); // accepted without a rank's file
  return 0;
}
