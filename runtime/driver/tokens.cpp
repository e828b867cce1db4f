//===- tokens.cpp - Token files for language-model programs ---------------===//

#include "driver/tokens.h"
#include "core/check.h"
#include "driver/files.h"
#include "driver/json.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

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
static uint32_t uint32At(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static uint32_t idAt(const unsigned char *p, int idBytes) {
  return idBytes == 2 ? (uint32_t)(p[0] | p[1] << 8) : uint32At(p);
}

static std::string str(int64_t value) { return std::to_string(value); }

static bool hasGlobCharacters(const std::string &spec) {
  return spec.find_first_of("*?[") != std::string::npos;
}

static std::string baseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string resolveTokenFiles(const std::string &flag, const std::string &spec,
                              std::vector<std::string> &files) {
  files.clear();
  struct stat info;
  if (hasGlobCharacters(spec) && stat(spec.c_str(), &info) != 0) {
    glob_t matches;
    int status = glob(spec.c_str(), GLOB_ERR, nullptr, &matches);
    if (status == 0)
      for (size_t i = 0; i < matches.gl_pathc; ++i)
        if (stat(matches.gl_pathv[i], &info) == 0 && S_ISREG(info.st_mode))
          files.push_back(matches.gl_pathv[i]);
    globfree(&matches);
    if (files.empty())
      return flag + "='" + spec + "' matches no token file";
    std::sort(files.begin(), files.end()); // glob sorts; the locale may not
    return "";
  }
  if (stat(spec.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    DIR *dir = opendir(spec.c_str());
    if (!dir)
      return "cannot read " + flag + " directory '" + spec +
             "': " + std::strerror(errno);
    bool train = false, val = false;
    while (dirent *entry = readdir(dir)) {
      std::string name = entry->d_name;
      std::string path = spec + (endsWith(spec, "/") ? "" : "/") + name;
      if (!endsWith(name, ".bin") || stat(path.c_str(), &info) != 0 ||
          !S_ISREG(info.st_mode))
        continue;
      files.push_back(path);
      train |= name.find("_train") != std::string::npos;
      val |= name.find("_val") != std::string::npos;
    }
    closedir(dir);
    std::sort(files.begin(), files.end());
    if (files.empty())
      return flag + "='" + spec + "' is a directory without *.bin token files";
    // One stream of both splits would train on the validation text.
    if (train && val)
      return flag + "='" + spec +
             "' is a directory holding both _train and _val token files; "
             "name one split with a glob ('" +
             spec + "/*_train*.bin')";
    return "";
  }
  files.push_back(spec);
  return "";
}

std::string tokenSidecarPath(const std::string &tokenFile) {
  if (!endsWith(tokenFile, ".bin"))
    return "";
  std::string stem = tokenFile.substr(0, tokenFile.size() - 4);
  // PREFIX_train_000001: the shard number is optional.
  size_t underscore = stem.rfind('_');
  if (underscore != std::string::npos && underscore + 1 < stem.size() &&
      stem.find_first_not_of("0123456789", underscore + 1) == std::string::npos)
    stem.resize(underscore);
  for (const char *split : {"_train", "_val"})
    if (endsWith(stem, split) && stem.size() > std::strlen(split) &&
        stem[stem.size() - std::strlen(split) - 1] != '/')
      return stem.substr(0, stem.size() - std::strlen(split)) + ".json";
  return "";
}

namespace {
/// What the runtime checks of a sidecar: the tokenizer's vocabulary (its
/// id bound) and the token count of every file it lists.
struct Sidecar {
  int64_t vocabSize = 0;
  std::string tokenizer; // its kind and class, for messages
  std::map<std::string, int64_t> fileTokens;
};
} // namespace

static std::string readSidecar(const std::string &path, Sidecar &sidecar) {
  std::string text;
  std::string error = readFile(path, text);
  if (!error.empty())
    return "token sidecar: " + error;
  JsonValue root;
  error = parseJson(text, root);
  if (!error.empty())
    return "token sidecar '" + path + "' is not valid JSON: " + error;
  const JsonValue *format = root.find("format");
  const JsonValue *tokenizer = root.find("tokenizer");
  const JsonValue *vocab = tokenizer ? tokenizer->find("vocab_size") : nullptr;
  if (!format || format->text != "zero-opt-tokens" || !vocab ||
      !vocab->asCount(sidecar.vocabSize))
    return "token sidecar '" + path +
           "' lacks \"format\": \"zero-opt-tokens\" or "
           "tokenizer.vocab_size";
  // "huggingface WordLevel", "bytes": for messages.
  for (const char *key : {"kind", "class"})
    if (const JsonValue *v = tokenizer->find(key))
      if (v->kind == JsonValue::String && !v->text.empty() &&
          v->text != sidecar.tokenizer)
        sidecar.tokenizer += (sidecar.tokenizer.empty() ? "" : " ") + v->text;
  if (const JsonValue *splits = root.find("splits"))
    for (const auto &[name, split] : splits->members)
      if (const JsonValue *files = split.find("files"))
        for (const JsonValue &file : files->items) {
          const JsonValue *fileName = file.find("name");
          const JsonValue *tokens = file.find("tokens");
          int64_t n = 0;
          if (!fileName || fileName->kind != JsonValue::String || !tokens ||
              !tokens->asCount(n))
            return "token sidecar '" + path + "': split '" + name +
                   "' lists a file without a name or token count";
          sidecar.fileTokens[fileName->text] = n;
        }
  return "";
}

TokenStream::~TokenStream() {
  for (Shard &shard : shards)
    if (shard.fd >= 0)
      close(shard.fd);
}

std::string TokenStream::openShard(Shard &shard) {
  const std::string &path = shard.path;
  shard.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (shard.fd < 0 || fstat(shard.fd, &info) != 0)
    return "cannot open token file '" + path + "': " + std::strerror(errno);
  if (S_ISDIR(info.st_mode))
    return "cannot read token file '" + path + "': it is a directory";
  int64_t size = info.st_size;
  unsigned char header[kHeaderBytes];
  if (size < kHeaderBytes || !readAt(shard.fd, 0, header, kHeaderBytes))
    return "token file '" + path + "' has " + str(size) +
           " bytes, fewer than its 1024-byte header";
  int32_t magic = (int32_t)uint32At(header),
          version = (int32_t)uint32At(header + 4);
  if (magic == kMagic16)
    shard.idBytes = 2;
  else if (magic == kMagic32)
    shard.idBytes = 4;
  else
    return "token file '" + path + "' starts with magic number " + str(magic) +
           ", expected 20240520 (uint16 ids) or 20240801 (uint32 ids), "
           "llm.c's formats";
  int32_t expected = shard.idBytes == 2 ? kVersion16 : kVersion32;
  if (version != expected)
    return "token file '" + path + "' has version " + str(version) +
           " for magic number " + str(magic) + "; this runtime reads version " +
           str(expected);
  shard.count = (int32_t)uint32At(header + 8);
  int64_t held = (size - kHeaderBytes) / shard.idBytes;
  if (shard.count < 0 || shard.count > held)
    return "token file '" + path + "': its header counts " + str(shard.count) +
           " tokens but the file holds only " + str(held);
  return "";
}

std::string TokenStream::open(const std::string &flag, const std::string &spec,
                              int64_t vocab, int64_t seqLen, int rank,
                              int worldSize) {
  std::vector<std::string> paths;
  std::string error = resolveTokenFiles(flag, spec, paths);
  if (!error.empty())
    return error;
  std::map<std::string, Sidecar> sidecars;
  count = 0;
  shards.clear();
  shards.reserve(paths.size());
  for (const std::string &path : paths) {
    shards.emplace_back();
    Shard &shard = shards.back();
    shard.path = path;
    error = openShard(shard);
    if (!error.empty())
      return error;
    shard.first = count;
    count += shard.count;

    std::string sidecarPath = tokenSidecarPath(path);
    struct stat info;
    if (sidecarPath.empty() || stat(sidecarPath.c_str(), &info) != 0)
      continue;
    auto [it, added] = sidecars.try_emplace(sidecarPath);
    Sidecar &sidecar = it->second;
    if (added) {
      error = readSidecar(sidecarPath, sidecar);
      if (!error.empty())
        return error;
      if (sidecar.vocabSize > vocab)
        return "token file '" + path + "' was made with a tokenizer of " +
               str(sidecar.vocabSize) + " ids" +
               (sidecar.tokenizer.empty() ? ""
                                          : " (" + sidecar.tokenizer + ")") +
               " (its sidecar '" + sidecarPath +
               "'), more than this model's vocabulary of " + str(vocab) +
               ": compile the model with a vocabulary of at least " +
               str(sidecar.vocabSize) +
               " (--model-config of the tokenizer's "
               "model)";
    }
    auto listed = sidecar.fileTokens.find(baseName(path));
    if (listed != sidecar.fileTokens.end() && listed->second != shard.count)
      return "token file '" + path + "' holds " + str(shard.count) +
             " tokens but its sidecar '" + sidecarPath + "' says " +
             str(listed->second) +
             ": the files and the sidecar are from different runs of "
             "prepare_data.py";
  }
  if (count < seqLen + 2)
    return (shards.size() == 1
                ? "token file '" + shards[0].path + "'"
                : flag + "='" + spec + "' (" + str(shards.size()) + " files)") +
           " holds " + str(count) + " tokens, too few for one sequence of " +
           str(seqLen) + " tokens and its targets (at least " +
           str(seqLen + 2) + ")";
  return checkIds(vocab, rank, worldSize);
}

uint64_t TokenStream::fingerprint() const {
  // FNV-1a over each file's name (not its directory: ranks may mount the
  // data at different paths) and token count.
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&](const void *data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      hash ^= ((const unsigned char *)data)[i];
      hash *= 1099511628211ull;
    }
  };
  for (const Shard &shard : shards) {
    std::string name = baseName(shard.path);
    mix(name.data(), name.size() + 1);
    mix(&shard.count, sizeof(shard.count));
  }
  return hash;
}

const TokenStream::Shard &TokenStream::shardAt(int64_t token) const {
  // The last shard starting at or before `token`; empty shards share their
  // start with the next, which upper_bound steps past.
  auto after =
      std::upper_bound(shards.begin(), shards.end(), token,
                       [](int64_t t, const Shard &s) { return t < s.first; });
  return *(after - 1);
}

bool TokenStream::read(int64_t first, int64_t n, std::vector<uint32_t> &ids,
                       std::string &failed) const {
  ids.resize(n);
  const Shard *shard = &shardAt(first);
  std::vector<unsigned char> bytes;
  int64_t done = 0;
  while (done < n) {
    while (shard->first + shard->count <= first + done)
      ++shard; // the next non-empty shard
    int64_t offset = first + done - shard->first;
    int64_t take = std::min(n - done, shard->count - offset);
    bytes.resize(take * shard->idBytes);
    errno = 0;
    if (!readAt(shard->fd, kHeaderBytes + offset * shard->idBytes, bytes.data(),
                bytes.size())) {
      failed = "cannot read token file '" + shard->path + "' at token offset " +
               str(offset) + ": " +
               (errno ? std::strerror(errno) : "the file got shorter");
      return false;
    }
    for (int64_t i = 0; i < take; ++i)
      ids[done + i] = idAt(&bytes[i * shard->idBytes], shard->idBytes);
    done += take;
  }
  return true;
}

std::string TokenStream::checkIds(int64_t vocab, int rank,
                                  int worldSize) const {
  int64_t begin = count * rank / worldSize;
  int64_t end = count * (rank + 1) / worldSize;
  const int64_t chunk = 1 << 20;
  std::vector<uint32_t> ids;
  std::string failed;
  for (int64_t first = begin; first < end; first += chunk) {
    int64_t n = std::min(chunk, end - first);
    if (!read(first, n, ids, failed))
      return failed;
    for (int64_t i = 0; i < n; ++i) {
      if (ids[i] < (uint64_t)vocab)
        continue;
      // Name the file the id is in, and its offset there.
      int64_t token = first + i;
      const Shard &shard = shardAt(token);
      return "token file '" + shard.path + "': token id " + str(ids[i]) +
             " at token offset " + str(token - shard.first) +
             " is not below the vocabulary size " + str(vocab);
    }
  }
  return "";
}

int64_t TokenStream::rowStart(int64_t batch, int64_t row, int64_t globalBatch,
                              int64_t seqLen) const {
  // 128 bits: (batch * globalBatch + row) * seqLen overflows 64 bits only
  // in absurd runs, but the modulo must stay exact if it does.
  __int128 rows = (__int128)batch * globalBatch + row - origin.row;
  __int128 modulus = count - seqLen - 1;
  __int128 position = (origin.token + rows * seqLen) % modulus;
  return (int64_t)(position < 0 ? position + modulus : position);
}

void TokenStream::fill(int64_t batch, int64_t firstRow, int64_t rows,
                       int64_t globalBatch, int64_t seqLen, int32_t *tokens,
                       int32_t *targets, int32_t *positions) const {
  std::vector<uint32_t> ids;
  std::string failed;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t start = rowStart(batch, firstRow + r, globalBatch, seqLen);
    if (!read(start, seqLen + 1, ids, failed))
      fatal("%s", failed.c_str());
    for (int64_t t = 0; t < seqLen; ++t) {
      if (tokens)
        tokens[r * seqLen + t] = (int32_t)ids[t];
      if (targets)
        targets[r * seqLen + t] = (int32_t)ids[t + 1];
      if (positions)
        positions[r * seqLen + t] = (int32_t)t;
    }
  }
}

} // namespace zrt
