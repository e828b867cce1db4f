//===- tokens.h - Token files for language-model programs -------*- C++ -*-===//
//
// llm.c's formats: a header of 256 little-endian int32 ([0] = the magic
// number, [1] = the version, [2] = the number of tokens N), then N
// little-endian ids:
//   magic 20240520, version 1: uint16 ids (vocabularies up to 65,536);
//   magic 20240801, version 7: uint32 ids (llm.c's Llama 3 form).
//
// --data and --val-data name one file, a directory (its *.bin files) or a
// glob; the files are read in name order as one stream of tokens (shards of
// one corpus: a sequence may span two of them). Every rank opens the same
// files and reads only the rows it trains on.
//
// scripts/prepare_data.py writes, beside files named PREFIX_train.bin,
// PREFIX_train_000001.bin, PREFIX_val.bin..., a sidecar PREFIX.json that
// names the tokenizer they were made with: a model whose vocabulary is
// smaller than the tokenizer's is refused before it trains.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_TOKENS_H
#define ZRT_DRIVER_TOKENS_H

#include <cstdint>
#include <string>
#include <vector>

namespace zrt {

/// Where a resumed stream continues: global row `row` (counted over the
/// whole run, as step x rows a step + row) starts at token `token`. Rows
/// after it follow one another, seqLen tokens apart, modulo the stream.
struct DataOrigin {
  int64_t row = 0;
  int64_t token = 0;
};

class TokenStream {
public:
  TokenStream() = default;
  TokenStream(const TokenStream &) = delete;
  TokenStream &operator=(const TokenStream &) = delete;
  ~TokenStream();

  /// Resolves `spec` (a file, a directory or a glob; `flag` names it in
  /// messages), opens every file and checks its header and sidecar against
  /// a program of vocabulary `vocab` with sequences of `seqLen` tokens, and
  /// the ids of this rank's 1/worldSize of the stream against `vocab`
  /// (together the ranks check them all). Returns "" or a message naming
  /// the file and, for a bad id, its token offset in that file.
  std::string open(const std::string &flag, const std::string &spec,
                   int64_t vocab, int64_t seqLen, int rank, int worldSize);

  /// Tokens in the whole stream.
  int64_t numTokens() const { return count; }
  /// The files, in stream order.
  size_t numFiles() const { return shards.size(); }
  /// A fingerprint of the file names and their token counts, the same on
  /// every rank that opened the same stream.
  uint64_t fingerprint() const;

  /// Rows before `origin.row` are not read again; by default the stream
  /// starts at token 0 with row 0.
  void setOrigin(DataOrigin origin) { this->origin = origin; }

  /// Token offset in the stream where global row `row` of batch `batch`
  /// (0-based) starts: origin.token + (batch * globalBatch + row -
  /// origin.row) * seqLen, modulo (N - seqLen - 1), so every world size
  /// sees the same rows and every row has its targets. With the default
  /// origin: ((batch * globalBatch + row) * seqLen) mod (N - seqLen - 1).
  int64_t rowStart(int64_t batch, int64_t row, int64_t globalBatch,
                   int64_t seqLen) const;

  /// Fills `rows` rows from global row `firstRow` of batch `batch`:
  /// tokens, targets (the tokens one further) and positions 0..seqLen-1,
  /// each rows x seqLen int32; any may be null. A failed read stops the
  /// job.
  void fill(int64_t batch, int64_t firstRow, int64_t rows, int64_t globalBatch,
            int64_t seqLen, int32_t *tokens, int32_t *targets,
            int32_t *positions) const;

  static constexpr int32_t kMagic16 = 20240520;
  static constexpr int32_t kVersion16 = 1;
  static constexpr int32_t kMagic32 = 20240801;
  static constexpr int32_t kVersion32 = 7;
  static constexpr int64_t kHeaderBytes = 256 * 4;

private:
  struct Shard {
    std::string path;
    int fd = -1;
    int64_t count = 0;
    int64_t first = 0; // its first token's offset in the stream
    int idBytes = 2;
  };

  std::string openShard(Shard &shard);
  /// The shard holding stream token `token` (< numTokens()).
  const Shard &shardAt(int64_t token) const;
  std::string checkIds(int64_t vocab, int rank, int worldSize) const;
  /// Reads stream tokens [first, first + n) into `ids`; false on a failed
  /// read, with `failed` naming the file and its token offset.
  bool read(int64_t first, int64_t n, std::vector<uint32_t> &ids,
            std::string &failed) const;

  std::vector<Shard> shards;
  int64_t count = 0;
  DataOrigin origin;
};

/// The files `spec` names (a file, a directory's *.bin files, or a glob),
/// in name order; "" or an error naming `flag` and `spec`.
std::string resolveTokenFiles(const std::string &flag, const std::string &spec,
                              std::vector<std::string> &files);

/// The sidecar of a token file written by scripts/prepare_data.py:
/// PREFIX.json for PREFIX_train.bin, PREFIX_val_000003.bin and the like;
/// "" for a name of another form.
std::string tokenSidecarPath(const std::string &tokenFile);

/// Reads exactly `bytes` at `offset` (looping over short reads); false on
/// an error or the end of the file.
bool readAt(int fd, int64_t offset, void *buffer, int64_t bytes);

} // namespace zrt

#endif // ZRT_DRIVER_TOKENS_H
