//===- file_checks.cpp - Checks of token files, JSON, safetensors ---------===//

#include "tests/file_checks.h"
#include "core/checkpoint.h"
#include "core/json.h"
#include "core/sha256.h"
#include "core/program.h"
#include "core/safetensors.h"
#include "core/tokens.h"

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
  putInt32(bytes, TokenFile::kMagic);
  putInt32(bytes, TokenFile::kVersion);
  putInt32(bytes, (int32_t)count);
  bytes.resize(TokenFile::kHeaderBytes, '\0');
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
      TokenFile file;
      error += file.open(path, 50, seq, rank, w);
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
  TokenFile file;
  file.open(path, 50, seq, 0, 1);
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
    TokenFile a, b;
    rank0 = a.open(path, 50, seq, 0, 2); // tokens 0..49
    rank1 = b.open(path, 50, seq, 1, 2); // tokens 50..99
  }
  check.expectTrue("tokens: a bad id is found by the rank that reads it",
                   rank0.empty() &&
                       rank1 == "token file '" + path +
                                    "': token id 50 at token offset 77 is "
                                    "not below the vocabulary size 50",
                   rank0 + " | " + rank1);
  unlink(path.c_str());
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
