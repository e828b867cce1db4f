//===- tokens.cpp - Token files for language-model programs ---------------===//

#include "core/tokens.h"
#include "core/check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace zrt {

bool readAt(int fd, int64_t offset, void *buffer, int64_t bytes) {
  auto *out = (char *)buffer;
  while (bytes > 0) {
    ssize_t got = pread(fd, out, bytes, offset);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    out += got;
    offset += got;
    bytes -= got;
  }
  return true;
}

// The format is little-endian whatever the host is.
static int32_t int32At(const unsigned char *p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24);
}

static uint16_t uint16At(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}

TokenFile::~TokenFile() {
  if (fd >= 0)
    close(fd);
}

std::string TokenFile::open(const std::string &filePath, int64_t vocab,
                            int64_t seqLen, int rank, int worldSize) {
  path = filePath;
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (fd < 0 || fstat(fd, &info) != 0)
    return "cannot open token file '" + path + "': " + std::strerror(errno);
  if (S_ISDIR(info.st_mode))
    return "cannot read token file '" + path + "': it is a directory";
  int64_t size = info.st_size;
  unsigned char header[kHeaderBytes];
  if (size < kHeaderBytes || !readAt(fd, 0, header, kHeaderBytes))
    return "token file '" + path + "' has " + std::to_string(size) +
           " bytes, fewer than its 1024-byte header";
  int32_t magic = int32At(header), version = int32At(header + 4);
  if (magic != kMagic)
    return "token file '" + path + "' starts with magic number " +
           std::to_string(magic) + ", expected 20240520 (llm.c's format)";
  if (version != kVersion)
    return "token file '" + path + "' has version " + std::to_string(version) +
           "; this runtime reads version 1";
  count = int32At(header + 8);
  int64_t held = (size - kHeaderBytes) / 2;
  if (count < 0 || count > held)
    return "token file '" + path + "': its header counts " +
           std::to_string(count) + " tokens but the file holds only " +
           std::to_string(held);
  if (count < seqLen + 2)
    return "token file '" + path + "' holds " + std::to_string(count) +
           " tokens, too few for one sequence of " + std::to_string(seqLen) +
           " tokens and its targets (at least " + std::to_string(seqLen + 2) +
           ")";
  return checkIds(vocab, rank, worldSize);
}

std::string TokenFile::checkIds(int64_t vocab, int rank, int worldSize) const {
  int64_t begin = count * rank / worldSize;
  int64_t end = count * (rank + 1) / worldSize;
  const int64_t chunk = 1 << 20;
  std::vector<unsigned char> bytes;
  for (int64_t first = begin; first < end; first += chunk) {
    int64_t n = std::min(chunk, end - first);
    bytes.resize(2 * n);
    if (!readAt(fd, kHeaderBytes + 2 * first, bytes.data(), 2 * n))
      return "cannot read token file '" + path + "' at token offset " +
             std::to_string(first);
    for (int64_t i = 0; i < n; ++i) {
      uint16_t id = uint16At(&bytes[2 * i]);
      if (id >= vocab)
        return "token file '" + path + "': token id " + std::to_string(id) +
               " at token offset " + std::to_string(first + i) +
               " is not below the vocabulary size " + std::to_string(vocab);
    }
  }
  return "";
}

int64_t TokenFile::rowStart(int64_t step, int64_t row, int64_t globalBatch,
                            int64_t seqLen) const {
  // 128 bits: (step * batch + row) * seqLen overflows 64 bits only in
  // absurd runs, but the modulo must stay exact if it does.
  unsigned __int128 position =
      ((unsigned __int128)step * globalBatch + row) * seqLen;
  return (int64_t)(position % (unsigned __int128)(count - seqLen - 1));
}

void TokenFile::fill(int64_t step, int64_t firstRow, int64_t rows,
                     int64_t globalBatch, int64_t seqLen, int32_t *tokens,
                     int32_t *targets, int32_t *positions) const {
  std::vector<unsigned char> bytes(2 * (seqLen + 1));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t start = rowStart(step, firstRow + r, globalBatch, seqLen);
    errno = 0;
    if (!readAt(fd, kHeaderBytes + 2 * start, bytes.data(), bytes.size()))
      fatal("cannot read token file '%s' at token offset %lld: %s",
            path.c_str(), (long long)start,
            errno ? std::strerror(errno) : "the file got shorter");
    for (int64_t t = 0; t < seqLen; ++t) {
      if (tokens)
        tokens[r * seqLen + t] = uint16At(&bytes[2 * t]);
      if (targets)
        targets[r * seqLen + t] = uint16At(&bytes[2 * t + 2]);
      if (positions)
        positions[r * seqLen + t] = (int32_t)t;
    }
  }
}

} // namespace zrt
