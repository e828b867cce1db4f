//===- safetensors.h - The safetensors file format --------------*- C++ -*-===//
//
// An 8-byte little-endian header length N, N bytes of JSON mapping each
// tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
// into the data that follows the header), and an optional "__metadata__"
// object of strings. https://github.com/huggingface/safetensors
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_SAFETENSORS_H
#define ZRT_DRIVER_SAFETENSORS_H

#include <cstdint>
#include <string>
#include <vector>

namespace zrt {

struct SafeTensor {
  std::string name;
  std::string dtype; // "F32", "BF16", ... as written in the file
  std::vector<int64_t> shape;
  int64_t begin = 0; // byte offsets into the data section
  int64_t end = 0;
  int64_t numel() const;
};

struct SafeTensorsFile {
  std::string path;
  int64_t dataStart = 0; // 8 + N
  std::vector<SafeTensor> tensors;
  const SafeTensor *find(const std::string &name) const;
};

/// Bytes per element of a safetensors dtype name, or 0 for one unknown.
int64_t safeDtypeBytes(const std::string &dtype);

/// Reads and checks the header of `path`: valid JSON of the expected form,
/// offsets inside the file and sized for their dtype and shape. Returns ""
/// or a message naming the file (and the tensor, when one is at fault).
std::string readSafeTensorsHeader(const std::string &path,
                                  SafeTensorsFile &out);

/// The 8-byte length and the JSON header for `tensors`, whose offsets must
/// already be set, padded with spaces so the data starts 8-byte aligned.
std::string safeTensorsHeader(const std::vector<SafeTensor> &tensors);

} // namespace zrt

#endif // ZRT_DRIVER_SAFETENSORS_H
