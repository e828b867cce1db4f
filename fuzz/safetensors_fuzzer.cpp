//===- safetensors_fuzzer.cpp - the safetensors header reader ------------===//
//
// readSafeTensorsHeader (runtime/driver/safetensors.cpp) on any file: a
// header or a message naming the problem, never a crash or a read out of
// bounds; what it accepts has every tensor inside the file.
//
//===----------------------------------------------------------------------===//
#include "driver/safetensors.h"
#include "file_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = writeInput(".safetensors", data, size);
  zrt::SafeTensorsFile file;
  std::string error = zrt::readSafeTensorsHeader(path, file);
  if (error.empty())
    for (const zrt::SafeTensor &tensor : file.tensors)
      if (tensor.begin < 0 || tensor.end < tensor.begin ||
          file.dataStart + tensor.end > int64_t(size))
        std::abort(); // accepted a tensor outside the file
  unlink(path.c_str());
  return 0;
}
