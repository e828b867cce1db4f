//===- tokens.h - Token files for language-model programs -------*- C++ -*-===//
//
// llm.c's format: a header of 256 little-endian int32 ([0] = 20240520,
// [1] = 1, [2] = the number of tokens N), then N little-endian uint16 token
// ids. Every rank opens the same file and reads only the rows it trains on.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_TOKENS_H
#define ZRT_CORE_TOKENS_H

#include <cstdint>
#include <string>

namespace zrt {

class TokenFile {
public:
  TokenFile() = default;
  TokenFile(const TokenFile &) = delete;
  TokenFile &operator=(const TokenFile &) = delete;
  ~TokenFile();

  /// Opens `path` and checks its header against a program with sequences of
  /// `seqLen` tokens, and the ids of this rank's 1/worldSize of the tokens
  /// against `vocab` (together the ranks check them all). Returns "" or a
  /// message naming the file and, for a bad id, its token offset.
  std::string open(const std::string &path, int64_t vocab, int64_t seqLen,
                   int rank, int worldSize);

  int64_t numTokens() const { return count; }

  /// Token offset where global row `row` of step `step` (0-based) starts:
  /// ((step * globalBatch + row) * seqLen) mod (N - seqLen - 1), so every
  /// world size sees the same rows and every row has its targets.
  int64_t rowStart(int64_t step, int64_t row, int64_t globalBatch,
                   int64_t seqLen) const;

  /// Fills `rows` rows from global row `firstRow` of step `step`: tokens,
  /// targets (the tokens one further) and positions 0..seqLen-1, each
  /// rows x seqLen int32; any may be null. A failed read stops the job.
  void fill(int64_t step, int64_t firstRow, int64_t rows, int64_t globalBatch,
            int64_t seqLen, int32_t *tokens, int32_t *targets,
            int32_t *positions) const;

  static constexpr int32_t kMagic = 20240520;
  static constexpr int32_t kVersion = 1;
  static constexpr int64_t kHeaderBytes = 256 * 4;

private:
  std::string checkIds(int64_t vocab, int rank, int worldSize) const;

  std::string path;
  int fd = -1;
  int64_t count = 0;
};

/// Reads exactly `bytes` at `offset` (looping over short reads); false on
/// an error or the end of the file.
bool readAt(int fd, int64_t offset, void *buffer, int64_t bytes);

} // namespace zrt

#endif // ZRT_CORE_TOKENS_H
