//===- file_input.h - A fuzzer's input as a file ----------------*- C++ -*-===//
//
// The safetensors and token readers take a path (they map or read files the
// way a training run does): each input is written to one file per process.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_FUZZ_FILE_INPUT_H
#define ZERO_FUZZ_FILE_INPUT_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

/// Writes `size` bytes to `path`; stops the fuzzer when the machine cannot
/// (that is not the reader's fault).
inline void writeFile(const std::string &path, const void *data, size_t size) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || std::fwrite(data, 1, size, file) != size ||
      std::fclose(file) != 0)
    std::abort();
}

/// The input as a file of this process's, named with `suffix`.
inline std::string writeInput(const char *suffix, const uint8_t *data,
                              size_t size) {
  const char *dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/zero-fuzz-" +
                     std::to_string(getpid()) + suffix;
  writeFile(path, data, size);
  return path;
}

#endif // ZERO_FUZZ_FILE_INPUT_H
