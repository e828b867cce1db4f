//===- file_checks.cpp - Checks of token files, JSON, safetensors ---------===//

#include "tests/file_checks.h"
#include "core/program.h"
#include "driver/checkpoint.h"
#include "driver/json.h"
#include "driver/safetensors.h"
#include "driver/sha256.h"
#include "driver/tokens.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace zrt {

static std::string tempPath(const char *stem) {
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + stem + "." +
         std::to_string(getpid());
}

static void putInt32(std::string &out, int32_t value) {
  for (int i = 0; i < 4; ++i)
    out += (char)((uint32_t)value >> (8 * i) & 0xff);
}

/// A token file of `count` tokens, token i = (7 i + 3) mod 50, except that
/// token `badAt` (if any) is 50.
static std::string writeTokens(int64_t count, int64_t badAt = -1) {
  std::string bytes;
  putInt32(bytes, TokenStream::kMagic16);
  putInt32(bytes, TokenStream::kVersion16);
  putInt32(bytes, (int32_t)count);
  bytes.resize(TokenStream::kHeaderBytes, '\0');
  for (int64_t i = 0; i < count; ++i) {
    int id = i == badAt ? 50 : (int)((7 * i + 3) % 50);
    bytes += (char)(id & 0xff);
    bytes += (char)(id >> 8);
  }
  std::string path = tempPath("zrt-tokens");
  FILE *file = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
  return path;
}

void checkTokenFiles(Checker &check) {
  const int64_t count = 100, batch = 6, seq = 4;
  std::string path = writeTokens(count);
  // rows[w][step] = the global batch as w ranks fill it.
  std::vector<std::vector<int32_t>> tokens(4), targets(4), positions(4);
  std::string error;
  for (int w = 1; w <= 3; ++w)
    for (int rank = 0; rank < w; ++rank) {
      TokenStream file;
      error += file.open("--data", path, 50, seq, rank, w);
      int64_t rows = batch / w;
      for (int64_t step = 0; step < 3; ++step) {
        std::vector<int32_t> t(rows * seq), g(rows * seq), p(rows * seq);
        file.fill(step, rank * rows, rows, batch, seq, t.data(), g.data(),
                  p.data());
        tokens[w].insert(tokens[w].end(), t.begin(), t.end());
        targets[w].insert(targets[w].end(), g.begin(), g.end());
        positions[w].insert(positions[w].end(), p.begin(), p.end());
      }
    }
  check.expectTrue("tokens: the file opens at every world size", error.empty(),
                   error);
  // W=2 and 3 fill steps rank by rank: reorder to step-major to compare.
  auto byStep = [&](int w, const std::vector<int32_t> &v) {
    std::vector<int32_t> out;
    int64_t perRankStep = batch / w * seq;
    for (int64_t step = 0; step < 3; ++step)
      for (int rank = 0; rank < w; ++rank)
        out.insert(out.end(), v.begin() + (rank * 3 + step) * perRankStep,
                   v.begin() + (rank * 3 + step + 1) * perRankStep);
    return out;
  };
  bool same = true;
  for (int w = 2; w <= 3; ++w)
    same &= byStep(w, tokens[w]) == tokens[1] &&
            byStep(w, targets[w]) == targets[1] &&
            byStep(w, positions[w]) == positions[1];
  check.expectTrue("tokens: world sizes 1, 2, 3 fill the same global rows",
                   same);
  // Step 2 (0-based 1), row 1 starts at ((1*6 + 1) * 4) mod (100 - 5) = 28.
  TokenStream file;
  file.open("--data", path, 50, seq, 0, 1);
  bool formula = file.rowStart(1, 1, batch, seq) == 28 &&
                 file.rowStart(20, 5, batch, seq) == (125 * 4) % 95;
  bool rows = true;
  for (int64_t j = 0; j < seq; ++j) {
    int64_t row = 7 * seq + j; // step 1, row 1 in step-major order
    rows &= tokens[1][row] == (7 * (28 + j) + 3) % 50 &&
            targets[1][row] == (7 * (29 + j) + 3) % 50 &&
            positions[1][row] == j;
  }
  check.expectTrue("tokens: rows start at (s*B + b)*T mod (N - T - 1); "
                   "targets are the next tokens",
                   formula && rows);
  unlink(path.c_str());

  path = writeTokens(count, 77);
  std::string rank0, rank1;
  {
    TokenStream a, b;
    rank0 = a.open("--data", path, 50, seq, 0, 2); // tokens 0..49
    rank1 = b.open("--data", path, 50, seq, 1, 2); // tokens 50..99
  }
  check.expectTrue("tokens: a bad id is found by the rank that reads it",
                   rank0.empty() &&
                       rank1 == "token file '" + path +
                                    "': token id 50 at token offset 77 is "
                                    "not below the vocabulary size 50",
                   rank0 + " | " + rank1);
  unlink(path.c_str());
}

/// A token file at `path` holding `ids`, as uint16 (magic 20240520,
/// version 1) or uint32 (20240801, 7), with the header's count and version
/// overridable to make bad files.
static void writeIds(const std::string &path, const std::vector<uint32_t> &ids,
                     int idBytes, int64_t headerCount = -1,
                     int32_t version = -1) {
  std::string bytes;
  putInt32(bytes, idBytes == 2 ? TokenStream::kMagic16 : TokenStream::kMagic32);
  putInt32(bytes, version >= 0   ? version
                  : idBytes == 2 ? TokenStream::kVersion16
                                 : TokenStream::kVersion32);
  putInt32(bytes, (int32_t)(headerCount >= 0 ? headerCount : ids.size()));
  bytes.resize(TokenStream::kHeaderBytes, '\0');
  for (uint32_t id : ids)
    for (int i = 0; i < idBytes; ++i)
      bytes += (char)(id >> (8 * i) & 0xff);
  FILE *file = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
}

static void writeText(const std::string &path, const std::string &text) {
  FILE *file = std::fopen(path.c_str(), "wb");
  std::fwrite(text.data(), 1, text.size(), file);
  std::fclose(file);
}

/// Every row of `steps` batches of `batch` rows as one rank fills them.
static std::vector<int32_t> allRows(const TokenStream &stream, int64_t steps,
                                    int64_t batch, int64_t seq) {
  std::vector<int32_t> out;
  for (int64_t step = 0; step < steps; ++step) {
    std::vector<int32_t> t(batch * seq), g(batch * seq);
    stream.fill(step, 0, batch, batch, seq, t.data(), g.data(), nullptr);
    out.insert(out.end(), t.begin(), t.end());
    out.insert(out.end(), g.begin(), g.end());
  }
  return out;
}

void checkTokenStreams(Checker &check) {
  std::string dir = tempPath("zrt-token-stream");
  mkdir(dir.c_str(), 0755);
  const int64_t vocab = 70000, seq = 5, batch = 3, count = 100;
  // Ids above 65,535, which only the uint32 form can hold.
  std::vector<uint32_t> ids(count);
  for (int64_t i = 0; i < count; ++i)
    ids[i] = (uint32_t)((i * 7919 + 65000) % vocab);
  std::string whole = dir + "/whole.bin";
  writeIds(whole, ids, 4);
  TokenStream one;
  std::string error = one.open("--data", whole, vocab, seq, 0, 1);
  std::vector<int32_t> t(seq);
  one.fill(0, 1, 1, batch, seq, t.data(), nullptr, nullptr);
  bool exact = error.empty() && one.numTokens() == count;
  for (int64_t j = 0; j < seq; ++j)
    exact &= t[j] == (int32_t)ids[seq + j];
  check.expectTrue("tokens: uint32 files (magic 20240801, version 7) hold "
                   "ids above 65,535",
                   exact, error);

  // The same stream as shards of 37, 0 and 63 tokens (uint32, uint16 ids
  // where they fit): rows span the boundaries and equal the whole file's.
  std::vector<uint32_t> a(ids.begin(), ids.begin() + 37),
      c(ids.begin() + 37, ids.end());
  std::string shards = dir + "/shards";
  mkdir(shards.c_str(), 0755);
  writeIds(shards + "/corpus_train_000000.bin", a, 4);
  writeIds(shards + "/corpus_train_000001.bin", {}, 2);
  writeIds(shards + "/corpus_train_000002.bin", c, 4);
  TokenStream byDir, byGlob;
  error =
      byDir.open("--data", shards, vocab, seq, 0, 1) +
      byGlob.open("--data", shards + "/corpus_train_*.bin", vocab, seq, 0, 1);
  check.expectTrue(
      "tokens: shards of one stream (a directory, a glob) fill the rows of "
      "the whole file, across the boundaries",
      error.empty() && byDir.numFiles() == 3 && byGlob.numFiles() == 3 &&
          allRows(byDir, 30, batch, seq) == allRows(one, 30, batch, seq) &&
          allRows(byGlob, 30, batch, seq) == allRows(one, 30, batch, seq),
      error);

  // A resumed stream continues at the recorded token: at the token the
  // step fixes, the rows are those of the unbroken run.
  TokenStream resumed;
  resumed.open("--data", whole, vocab, seq, 0, 1);
  resumed.setOrigin({7 * batch, one.rowStart(7, 0, batch, seq)});
  bool continues = true;
  for (int64_t step = 7; step < 40; ++step)
    for (int64_t row = 0; row < batch; ++row)
      continues &= resumed.rowStart(step, row, batch, seq) ==
                   one.rowStart(step, row, batch, seq);
  resumed.setOrigin({7 * batch, 11});
  continues &= resumed.rowStart(7, 0, batch, seq) == 11 &&
               resumed.rowStart(8, 1, batch, seq) == 11 + 4 * seq;
  check.expectTrue("tokens: a stream resumed at the recorded token continues "
                   "the rows of the unbroken run",
                   continues);

  // Refusals, each naming the file (and the token offset in it).
  std::vector<std::string> errors;
  auto refuse = [&](const std::string &path, int64_t v) {
    TokenStream stream;
    errors.push_back(stream.open("--data", path, v, seq, 0, 1));
  };
  refuse(dir + "/nothing_*.bin", vocab);
  std::string mixed = dir + "/mixed";
  mkdir(mixed.c_str(), 0755);
  writeIds(mixed + "/x_train.bin", ids, 4);
  writeIds(mixed + "/x_val.bin", ids, 4);
  refuse(mixed, vocab);
  writeIds(dir + "/v1.bin", ids, 4, -1, /*version=*/1);
  refuse(dir + "/v1.bin", vocab);
  writeIds(dir + "/short.bin", ids, 4, /*headerCount=*/count + 1);
  refuse(dir + "/short.bin", vocab);
  refuse(shards, /*vocab=*/65536);
  size_t firstOver = 0;
  while (ids[firstOver] < 65536)
    ++firstOver;
  std::string expected[] = {
      "--data='" + dir + "/nothing_*.bin' matches no token file",
      "--data='" + mixed +
          "' is a directory holding both _train and _val token files; name "
          "one split with a glob ('" +
          mixed + "/*_train*.bin')",
      "token file '" + dir +
          "/v1.bin' has version 1 for magic number 20240801; this runtime "
          "reads version 7",
      "token file '" + dir +
          "/short.bin': its header counts 101 tokens but "
          "the file holds only 100",
      "token file '" + shards + "/corpus_train_000000.bin': token id " +
          std::to_string(ids[firstOver]) + " at token offset " +
          std::to_string(firstOver) +
          " is not below the vocabulary size 65536"};
  bool named = true;
  std::string seen;
  for (size_t i = 0; i < errors.size(); ++i) {
    named &= errors[i] == expected[i];
    seen += errors[i] + " | ";
  }
  check.expectTrue("tokens: an empty glob, a mixed directory, a bad version, "
                   "a short body, an id over the vocabulary: refused by name",
                   named, seen);

  // The sidecar of PREFIX_train[_NNNNNN].bin is PREFIX.json; it refuses a
  // model smaller than its tokenizer, and files it counts otherwise.
  bool paths = tokenSidecarPath("d/x_train.bin") == "d/x.json" &&
               tokenSidecarPath("d/x_y_val_000012.bin") == "d/x_y.json" &&
               tokenSidecarPath("d/_train.bin") == "" &&
               tokenSidecarPath("d/x.bin") == "" &&
               tokenSidecarPath("d/x_train.json") == "";
  writeText(shards + "/corpus.json",
            R"({"format": "zero-opt-tokens", "version": 1, "dtype": "uint32",
                "tokenizer": {"kind": "huggingface", "class": "WordLevel",
                              "vocab_size": 70001},
                "splits": {"train": {"files": [
                  {"name": "corpus_train_000000.bin", "tokens": 37},
                  {"name": "corpus_train_000002.bin", "tokens": 64}]}}})");
  TokenStream small;
  std::string tooSmall = small.open("--data", shards, vocab, seq, 0, 1);
  TokenStream stale;
  std::string staleCount = stale.open("--data", shards, vocab + 1, seq, 0, 1);
  check.expectTrue(
      "tokens: the sidecar PREFIX.json refuses a model smaller than its "
      "tokenizer, and a file whose count it does not list",
      paths &&
          tooSmall == "token file '" + shards +
                          "/corpus_train_000000.bin' was made with a "
                          "tokenizer of 70001 ids (huggingface WordLevel) "
                          "(its sidecar '" +
                          shards +
                          "/corpus.json'), more than this model's vocabulary "
                          "of 70000: compile the model with a vocabulary of "
                          "at least 70001 (--model-config of the tokenizer's "
                          "model)" &&
          staleCount ==
              "token file '" + shards +
                  "/corpus_train_000002.bin' holds 63 "
                  "tokens but its sidecar '" +
                  shards +
                  "/corpus.json' says 64: "
                  "the files and the sidecar are from different runs of "
                  "prepare_data.py",
      tooSmall + " | " + staleCount);
  std::string remove = "rm -rf '" + dir + "'";
  if (std::system(remove.c_str()) != 0)
    std::fprintf(stderr, "warning: cannot remove %s\n", dir.c_str());
}

void checkSha256(Checker &check) {
  // FIPS 180-4's examples, and a million 'a' fed in uneven pieces (the
  // streaming path across block boundaries).
  auto digest = [](const std::string &text) {
    Sha256 sha;
    sha.update(text.data(), text.size());
    return sha.hexDigest();
  };
  bool ok =
      digest("") ==
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" &&
      digest("abc") ==
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" &&
      digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
  Sha256 million;
  std::string as(1000000, 'a');
  for (size_t at = 0, piece = 1; at < as.size(); at += piece, piece = piece * 3 % 1000 + 1)
    million.update(as.data() + at, std::min(piece, as.size() - at));
  ok = ok && million.hexDigest() ==
                 "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  check.expectTrue("sha256 matches FIPS 180-4's examples", ok);

  // The SHA-NI path (where the CPU has it) against the portable code, on
  // pseudo-random bytes of every length around the block and padding
  // boundaries and fed in uneven pieces.
  std::string bytes(4099, 0);
  uint32_t x = 12345;
  for (char &c : bytes)
    c = (char)((x = x * 1103515245u + 12345u) >> 24);
  bool same = true;
  for (size_t length = 0; length < bytes.size() && same;
       length += length < 200 ? 1 : 97) {
    Sha256 fast, portable(/*allowHardware=*/false);
    for (size_t at = 0, piece = 7; at < length; at += piece, piece = piece * 5 % 131 + 1) {
      size_t n = std::min(piece, length - at);
      fast.update(bytes.data() + at, n);
      portable.update(bytes.data() + at, n);
    }
    same = fast.hexDigest() == portable.hexDigest();
  }
  check.expectTrue(std::string("sha256: the ") +
                       (Sha256::hardwareAvailable() ? "SHA-NI" : "portable") +
                       " path equals the portable one",
                   same);
}

void checkJson(Checker &check) {
  const char *good[] = {"{}", " {\"a\": [1, 2.5e3, -0, true, false, null]} ",
                        "{\"\\u00e9\\ud83d\\ude00\\n\": \"x\"}", "[[[]]]",
                        "\"s\""};
  const char *bad[] = {"{\"a\":1,}", "[01]",      "{\"a\":1,\"a\":2}",
                       "\"abc",      "\"a\tb\"",  "{} x",
                       "[1 2]",      "{a:1}",     "\"\\ud800\"",
                       "tru",        "-",         "1.",
                       "",           "{\"a\" 1}", "\"\\x\""};
  bool accepts = true, refuses = true;
  std::string detail;
  JsonValue value;
  for (const char *text : good)
    if (!parseJson(text, value).empty())
      accepts = false, detail += std::string(" accepted? ") + text;
  for (const char *text : bad)
    if (parseJson(text, value).empty())
      refuses = false, detail += std::string(" refused? ") + text;
  std::string deep(100, '[');
  deep += std::string(100, ']');
  refuses &= parseJson(deep, value).find("deeper than 64") != std::string::npos;
  parseJson("{\"k\": {\"n\": 12345678901234}}", value);
  int64_t n = 0;
  bool count = value.find("k")->find("n")->asCount(n) && n == 12345678901234;
  check.expectTrue("json: accepts valid documents", accepts, detail);
  check.expectTrue("json: refuses trailing commas, leading zeros, duplicate "
                   "keys, control characters, lone surrogates, deep nesting",
                   refuses, detail);
  check.expectTrue("json: integers are exact", count);
  std::string error = parseJson("{\"a\":1,\"a\":2}", value);
  check.expectTrue("json: errors give the byte offset",
                   error == "duplicate key \"a\" at byte 7", error);
}

/// A mixed program at world size 1 (the save gathers nothing there).
static void declare(zrt_context *ctx) {
  zrt_declare_program(ctx, ZRT_ABI_VERSION, 1, 0, ZRT_TASK_CLASSIFY, 2, 1, 3,
                      2);
  zrt_declare_arg(ctx, 0, "w", ZRT_ROLE_PARAM, ZRT_BF16, 2, 3, 5, 0, 0, 0,
                  ZRT_INIT_NORMAL, 1.0f);
  zrt_declare_arg(ctx, 1, "w", ZRT_ROLE_MASTER, ZRT_F32, 2, 3, 5, 0, 0, 0,
                  ZRT_INIT_NORMAL, 1.0f);
  zrt_declare_arg(ctx, 2, "b", ZRT_ROLE_PARAM, ZRT_F32, 1, 5, 0, 0, 0, 0,
                  ZRT_INIT_UNIFORM, 1.0f);
  zrt_declare_arg(ctx, 3, "c", ZRT_ROLE_PARAM, ZRT_BF16, 0, 0, 0, 0, 0, 0,
                  ZRT_INIT_UNIFORM, 1.0f);
}

static std::vector<std::vector<char>> snapshot(zrt_context *ctx,
                                               const std::vector<void *> &b) {
  std::vector<std::vector<char>> bytes;
  for (size_t i = 0; i < b.size(); ++i) {
    int64_t n = argSlice(ctx, ctx->args[i]).count * elementBytes(ctx->args[i]);
    bytes.emplace_back((char *)b[i], (char *)b[i] + n);
  }
  return bytes;
}

void checkSafeTensors(Checker &check) {
  std::string path = tempPath("zrt-params") + ".safetensors";
  zrt_context *ctx = createLocalContext();
  declare(ctx);
  std::vector<void *> buffers = allocateArgs(ctx);
  initParams(ctx, buffers, 5);
  auto before = snapshot(ctx, buffers);
  std::string error = saveParams(ctx, buffers, path);
  destroyContext(ctx);

  SafeTensorsFile file;
  error += readSafeTensorsHeader(path, file);
  bool header = file.tensors.size() == 3 && file.dataStart % 8 == 0 &&
                file.tensors[0].name == "w" && file.tensors[0].dtype == "F32" &&
                file.tensors[0].shape == std::vector<int64_t>{3, 5} &&
                file.tensors[1].dtype == "F32" &&
                file.tensors[2].dtype == "BF16" &&
                file.tensors[2].shape.empty() && file.tensors[2].end == 82;
  check.expectTrue("safetensors: saved header names, dtypes (masters as F32), "
                   "shapes, offsets",
                   error.empty() && header, error);

  ctx = createLocalContext();
  declare(ctx);
  buffers = allocateArgs(ctx);
  std::string unused;
  error = loadParams(ctx, buffers, path, unused);
  bool same = snapshot(ctx, buffers) == before;
  destroyContext(ctx);
  check.expectTrue("safetensors: save then load restores params and masters "
                   "bit for bit",
                   error.empty() && unused.empty() && same, error);
  unlink(path.c_str());
  check.expectTrue("safetensors: no temporary file is left behind",
                   access((path + ".tmp").c_str(), F_OK) != 0);
}

} // namespace zrt
