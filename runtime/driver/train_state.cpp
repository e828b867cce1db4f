//===- train_state.cpp - Checkpoints of the whole training state ----------===//
//
// See train_state.h for the layout. Every file error is found on one rank
// and agreed on (agree.h), so all ranks leave together; a checkpoint that
// is incomplete, truncated, corrupted or of another model is refused before
// any buffer is touched.
//
//===----------------------------------------------------------------------===//

#include "driver/train_state.h"
#include "core/agree.h"
#include "core/check.h"
#include "core/device.h"
#include "core/program.h"
#include "driver/files.h"
#include "driver/json.h"
#include "driver/safetensors.h"
#include "driver/sha256.h"
#include "driver/train_state_index.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace zrt {

namespace {

std::string str(int64_t value) { return std::to_string(value); }

/// The arguments a checkpoint holds: all that a step carries to the next.
bool isState(int32_t role) {
  return role == ZRT_ROLE_PARAM || role == ZRT_ROLE_MASTER ||
         role == ZRT_ROLE_ADAM_M || role == ZRT_ROLE_ADAM_V ||
         role == ZRT_ROLE_GRAD_ACCUM;
}

/// The state arguments a checkpoint stores: all but the exact accumulators
/// of a --deterministic program (ZRT_EXACT, 16 bytes per element), which
/// are zero between steps, as every accumulator is, and would otherwise
/// make each checkpoint hold four times the model in zeros. Loading leaves
/// them as allocated (zero), whatever the checkpoint holds under their name.
bool isSaved(const ArgDesc &arg) {
  return isState(arg.role) &&
         !(arg.role == ZRT_ROLE_GRAD_ACCUM && arg.dtype == ZRT_EXACT);
}

std::string tensorKey(const ArgDesc &arg) {
  return std::string(roleName(arg.role)) + "/" + arg.name;
}

std::string dtypeName(int32_t dtype) {
  return dtype == ZRT_BF16 ? "BF16" : "F32";
}

std::string stepDirName(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%08lld", (long long)step);
  return name;
}

/// The model a checkpoint belongs to: its parameters' names, dtypes and
/// whole shapes (FNV-1a), which neither the stage nor the world size
/// changes.
std::string modelHash(const zrt_context *ctx) {
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&](const void *data, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i)
      hash = (hash ^ ((const unsigned char *)data)[i]) * 1099511628211ull;
  };
  for (const ArgDesc &arg : ctx->args) {
    if (arg.role != ZRT_ROLE_PARAM)
      continue;
    mix(arg.name.data(), arg.name.size() + 1);
    mix(&arg.dtype, sizeof(arg.dtype));
    mix(&arg.rank, sizeof(arg.rank));
    mix(arg.dims.data(), arg.rank * sizeof(int64_t));
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)hash);
  return hex;
}

/// Tests of a crash during a write: ZRT_TEST_KILL_IN_CHECKPOINT=R:S makes
/// rank R kill itself (SIGKILL) once its file of step S's checkpoint is
/// written, while the checkpoint is still partial.
void killedInCheckpoint(int rank, int64_t step) {
  const char *knob = std::getenv("ZRT_TEST_KILL_IN_CHECKPOINT");
  long long killRank = -1, killStep = -1;
  if (knob && std::sscanf(knob, "%lld:%lld", &killRank, &killStep) == 2 &&
      killRank == rank && killStep == step)
    raise(SIGKILL);
}

/// Tests of a full disk: ZRT_TEST_DISK_BYTES=N makes every checkpoint file
/// write past its first N bytes fail with ENOSPC, as a disk that fills up
/// part way would (a file-size ulimit would also stop MPI's own files).
int64_t diskBytes() {
  static const int64_t bytes = [] {
    const char *knob = std::getenv("ZRT_TEST_DISK_BYTES");
    return knob ? std::atoll(knob) : INT64_MAX;
  }();
  return bytes;
}

/// A file written front to back and hashed on the way.
struct HashedWriter {
  std::string path;
  int fd = -1;
  std::string error;
  Sha256 digest;
  int64_t bytes = 0;

  bool open() {
    errno = 0;
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
      error = "cannot create '" + path + "': " + errnoText();
    return fd >= 0;
  }
  void write(const void *data, int64_t count) {
    digest.update(data, count);
    const char *p = (const char *)data;
    while (error.empty() && count > 0) {
      errno = 0;
      ssize_t n = bytes + count > diskBytes() ? (errno = ENOSPC, -1)
                                              : ::write(fd, p, count);
      if (n <= 0) {
        error = "writing '" + path + "' failed: " + errnoText();
        return;
      }
      p += n, count -= n, bytes += n;
    }
  }
  /// fsync and close; the error, if any, names the file.
  void finish() {
    if (error.empty() && fsync(fd) != 0)
      error = "syncing '" + path + "' failed: " + errnoText();
    if (close(fd) != 0 && error.empty())
      error = "closing '" + path + "' failed: " + errnoText();
    fd = -1;
  }
};

/// What this rank stores: on the ranks of the first shard group (every rank
/// without shard groups) its shard of every sharded state tensor, and on
/// rank 0 every replicated one. The other shard groups hold copies of the
/// first one's shards: their files hold no tensor.
std::vector<size_t> storedArgs(const zrt_context *ctx) {
  bool firstGroup = ctx->rank < shardCount(ctx);
  std::vector<size_t> stored;
  for (size_t i = 0; i < ctx->args.size(); ++i)
    if (isSaved(ctx->args[i]) &&
        (ctx->args[i].sharded ? firstGroup : ctx->rank == 0))
      stored.push_back(i);
  return stored;
}

/// Writes this rank's file; returns its entry of the index's "files" (a
/// JSON member) or sets `error`.
std::string writeRankFile(zrt_context *ctx, const std::vector<void *> &buffers,
                          const std::string &dir, int64_t &bytes,
                          std::string &error) {
  std::vector<size_t> stored = storedArgs(ctx);
  std::vector<SafeTensor> tensors;
  int64_t offset = 0;
  for (size_t i : stored) {
    const ArgDesc &arg = ctx->args[i];
    SafeTensor tensor;
    tensor.name = tensorKey(arg);
    tensor.dtype = dtypeName(arg.dtype);
    int64_t count = argSlice(ctx, arg).count;
    if (arg.sharded)
      tensor.shape = {count};
    else
      tensor.shape.assign(arg.dims.begin(), arg.dims.begin() + arg.rank);
    tensor.begin = offset;
    offset += count * elementBytes(arg);
    tensor.end = offset;
    tensors.push_back(tensor);
  }
  std::string header = safeTensorsHeader(tensors);
  HashedWriter file;
  std::string name = rankFileName(ctx->rank);
  file.path = dir + "/" + name;
  if (!file.open()) {
    error = file.error;
    return "";
  }
  file.write(header.data(), header.size());
  std::string tensorDigests;
  for (size_t k = 0; k < stored.size(); ++k) {
    const ArgDesc &arg = ctx->args[stored[k]];
    int64_t bytes = argSlice(ctx, arg).count * elementBytes(arg);
    HostBuffer host(ctx, buffers[stored[k]], bytes, /*load=*/true);
    Sha256 digest;
    digest.update(host.data(), bytes);
    file.write(host.data(), bytes);
    tensorDigests += std::string(k ? ", " : "") + jsonQuote(tensors[k].name) +
                     ": " + jsonQuote(digest.hexDigest());
  }
  file.finish();
  bytes = file.bytes;
  if (!file.error.empty()) {
    error = file.error;
    return "";
  }
  return "    " + jsonQuote(name) + ": {\"bytes\": " + str(file.bytes) +
         ", \"sha256\": " + jsonQuote(file.digest.hexDigest()) +
         ", \"tensors\": {" + tensorDigests + "}}";
}

/// Every rank's string, concatenated in rank order on rank 0.
std::vector<std::string> gatherStrings(zrt_context *ctx,
                                       const std::string &mine) {
  if (ctx->comm == MPI_COMM_NULL)
    return {mine};
  int length = (int)mine.size();
  std::vector<int> lengths(ctx->worldSize), displs(ctx->worldSize);
  ZRT_MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0,
                           ctx->comm));
  std::string all;
  if (ctx->rank == 0) {
    int total = 0;
    for (int r = 0; r < ctx->worldSize; ++r)
      displs[r] = total, total += lengths[r];
    all.resize(total);
  }
  ZRT_MPI_CHECK(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(),
                            lengths.data(), displs.data(), MPI_CHAR, 0,
                            ctx->comm));
  std::vector<std::string> parts;
  if (ctx->rank == 0)
    for (int r = 0; r < ctx->worldSize; ++r)
      parts.push_back(all.substr(displs[r], lengths[r]));
  return parts;
}

/// The index of a checkpoint whose files are described by `files`.
std::string indexText(const zrt_context *ctx, const TrainPosition &position,
                      const std::vector<std::string> &files) {
  std::string text =
      "{\n  \"format\": \"" + std::string(kTrainStateFormat) +
      "\",\n  \"version\": " + str(kTrainStateFormatVersion) +
      ",\n  \"model\": " + jsonQuote(modelHash(ctx)) +
      ",\n  \"stage\": " + str(ctx->program.stage) +
      ",\n  \"world_size\": " + str(ctx->worldSize) +
      ",\n  \"shard_group_size\": " + str(shardCount(ctx)) +
      ",\n  \"step\": " + str(position.step) +
      ",\n  \"seed\": " + str((int64_t)position.seed) +
      (position.dataNextToken < 0
           ? std::string()
           : ",\n  \"data\": {\"tokens\": " + str(position.dataTokens) +
                 ", \"next_token\": " + str(position.dataNextToken) + "}") +
      ",\n  \"tensors\": {\n";
  bool first = true;
  for (const ArgDesc &arg : ctx->args) {
    if (!isSaved(arg))
      continue;
    std::string shape;
    for (int32_t d = 0; d < arg.rank; ++d)
      shape += (d ? ", " : "") + str(arg.dims[d]);
    text +=
        std::string(first ? "" : ",\n") + "    " + jsonQuote(tensorKey(arg)) +
        ": {\"dtype\": " + jsonQuote(dtypeName(arg.dtype)) + ", \"shape\": [" +
        shape + "], \"sharded\": " + (arg.sharded ? "true" : "false") + "}";
    first = false;
  }
  text += "\n  },\n  \"files\": {\n";
  for (size_t r = 0; r < files.size(); ++r)
    text += files[r] + (r + 1 < files.size() ? ",\n" : "\n");
  return text + "  }\n}\n";
}

/// The complete checkpoints in `dir`, oldest first.
std::vector<std::string> completeCheckpoints(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *entry = readdir(d)) {
      std::string name = entry->d_name;
      if (name.rfind("step-", 0) == 0 && name.find('.') == std::string::npos &&
          pathExists(dir + "/" + name + "/index.json"))
        names.push_back(name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Rank 0, once every file is durable: the index, the rename that makes
/// the checkpoint whole, `latest`, and pruning to `keep`.
std::string publish(const std::string &dir, const std::string &temporary,
                    const std::string &index, int64_t step, int64_t keep) {
  std::string error = writeFileAtomically(temporary + "/index.json", index);
  if (!error.empty())
    return error;
  std::string final = dir + "/" + stepDirName(step);
  // A checkpoint of the same step from an earlier run is replaced only once
  // the new one is complete.
  std::string previous = final + ".old";
  if (pathExists(final)) {
    removeTree(previous);
    if (rename(final.c_str(), previous.c_str()) != 0)
      return "cannot move '" + final + "' aside: " + errnoText();
  }
  if (rename(temporary.c_str(), final.c_str()) != 0)
    return "cannot rename '" + temporary + "' to '" + final +
           "': " + errnoText();
  syncDirectory(dir);
  removeTree(previous);
  error = writeFileAtomically(dir + "/latest", stepDirName(step) + "\n");
  if (!error.empty())
    return error;
  if (keep > 0) {
    std::vector<std::string> complete = completeCheckpoints(dir);
    for (size_t i = 0; i + keep < complete.size(); ++i)
      if (complete[i] != stepDirName(step))
        removeTree(dir + "/" + complete[i]);
  }
  return "";
}

} // namespace

std::string saveTrainState(zrt_context *ctx, const std::vector<void *> &buffers,
                           const std::string &dir,
                           const TrainPosition &position, int64_t keep,
                           int64_t &bytes) {
  quiesceComm(ctx);
  bytes = 0;
  synchronizeDevice(ctx);
  std::string temporary = dir + "/" + stepDirName(position.step) + ".tmp";
  // A file-size limit would kill a rank by SIGXFSZ mid-write; ignored, the
  // write fails with EFBIG and is reported like a full disk.
  void (*previous)(int) = std::signal(SIGXFSZ, SIG_IGN);
  std::string error;
  if (ctx->rank == 0) {
    error = makeDirectories(dir);
    if (error.empty()) {
      removeTree(temporary); // what a crashed save left
      if (mkdir(temporary.c_str(), 0755) != 0)
        error = "cannot create directory '" + temporary + "': " + errnoText();
    }
  }
  error = agreeOnError(ctx, error);
  std::string entry;
  if (error.empty()) {
    int64_t mine = 0;
    entry = writeRankFile(ctx, buffers, temporary, mine, error);
    killedInCheckpoint(ctx->rank, position.step);
    error = agreeOnError(ctx, error);
    bytes = mine;
    if (ctx->comm != MPI_COMM_NULL)
      ZRT_MPI_CHECK(
          MPI_Allreduce(&mine, &bytes, 1, MPI_INT64_T, MPI_SUM, ctx->comm));
  }
  if (error.empty()) {
    std::vector<std::string> files = gatherStrings(ctx, entry);
    if (ctx->rank == 0)
      error = publish(dir, temporary, indexText(ctx, position, files),
                      position.step, keep);
    error = agreeOnError(ctx, error);
  }
  if (!error.empty() && ctx->rank == 0)
    removeTree(temporary);
  std::signal(SIGXFSZ, previous);
  if (!error.empty())
    return "checkpoint of step " + str(position.step) +
           " not written: " + error;
  return "";
}

bool hasCheckpoint(const std::string &dir) {
  return pathExists(dir + "/latest") || pathExists(dir + "/index.json");
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

namespace {

/// The checkpoint directory `path` names: itself, or what its `latest`
/// names.
std::string resolve(const std::string &path, std::string &dir) {
  if (pathExists(path + "/index.json")) {
    dir = path;
    return "";
  }
  if (!pathExists(path + "/latest")) {
    if (pathExists(path) && path.size() > 4 &&
        path.compare(path.size() - 4, 4, ".tmp") == 0)
      return "'" + path +
             "' is an incomplete checkpoint (a save that did "
             "not finish: it has no index.json)";
    return pathExists(path)
               ? "'" + path +
                     "' holds no checkpoint (neither an "
                     "index.json nor a 'latest' file)"
               : "cannot resume from '" + path + "': no such directory";
  }
  std::string latest;
  std::string error = readFile(path + "/latest", latest);
  if (!error.empty())
    return error;
  latest.erase(latest.find_last_not_of(" \n\r\t") + 1);
  if (latest.empty() || latest.find('/') != std::string::npos)
    return "'" + path + "/latest' does not name a checkpoint";
  dir = path + "/" + latest;
  if (!pathExists(dir + "/index.json"))
    return "'" + dir + "' (named by '" + path +
           "/latest') is not a complete checkpoint: it has no index.json";
  return "";
}

std::string parseIndex(const std::string &dir, TrainStateIndex &index) {
  std::string where = dir + "/index.json";
  std::string text;
  std::string error = readFile(where, text);
  if (!error.empty())
    return error;
  error = parseTrainStateIndex(text, where, index);
  index.path = dir;
  return error;
}

/// Refuses a checkpoint whose tensors do not fit this program; "" if they
/// all do. Accumulators may be missing: they are zero between steps.
std::string checkModel(const zrt_context *ctx, const TrainStateIndex &index) {
  for (const ArgDesc &arg : ctx->args) {
    if (!isSaved(arg))
      continue;
    std::string key = tensorKey(arg);
    auto it = index.tensors.find(key);
    if (it == index.tensors.end()) {
      if (arg.role == ZRT_ROLE_GRAD_ACCUM)
        continue;
      return "checkpoint '" + index.path +
             "' is of another model: it has "
             "no tensor '" +
             key + "'";
    }
    std::vector<int64_t> shape(arg.dims.begin(), arg.dims.begin() + arg.rank);
    if (it->second.shape != shape || it->second.dtype != dtypeName(arg.dtype))
      return "checkpoint '" + index.path + "' is of another model: its '" +
             key + "' is " + it->second.dtype + " " +
             shapeString(it->second.shape.data(), it->second.shape.size()) +
             ", this program's is " + dtypeName(arg.dtype) + " " +
             shapeString(arg.dims.data(), arg.rank);
  }
  if (index.model != modelHash(ctx))
    return "checkpoint '" + index.path +
           "' is of another model: its "
           "parameter list differs from this program's";
  return "";
}

/// An opened checkpoint file: checked against the index (size, SHA-256)
/// before anything is read from it.
struct CheckedFile {
  SafeTensorsFile header;
  int fd = -1;
};

std::string hashRange(int fd, int64_t begin, int64_t end, std::string &hex) {
  Sha256 digest;
  std::vector<char> chunk(8 << 20);
  for (int64_t at = begin; at < end;) {
    ssize_t n =
        pread(fd, chunk.data(), std::min<int64_t>(chunk.size(), end - at), at);
    if (n <= 0)
      return errnoText();
    digest.update(chunk.data(), n);
    at += n;
  }
  hex = digest.hexDigest();
  return "";
}

std::string openChecked(const TrainStateIndex &index, int rank,
                        CheckedFile &out) {
  std::string name = rankFileName(rank);
  std::string path = index.path + "/" + name;
  const TrainStateIndex::File &entry = index.files.at(name);
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return "checkpoint file '" + path + "' is missing";
  if (st.st_size != entry.bytes)
    return "checkpoint file '" + path + "' has " + str(st.st_size) +
           " bytes, the index says " + str(entry.bytes) +
           (st.st_size < entry.bytes ? " (truncated)" : "");
  std::string error = readSafeTensorsHeader(path, out.header);
  if (!error.empty())
    return error;
  out.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (out.fd < 0)
    return "cannot open '" + path + "': " + errnoText();
  std::string hex;
  error = hashRange(out.fd, 0, st.st_size, hex);
  if (!error.empty())
    return "reading '" + path + "' failed: " + error;
  if (hex == entry.sha256)
    return "";
  // Name what changed: the first tensor whose digest differs, else the
  // header.
  for (const SafeTensor &tensor : out.header.tensors) {
    auto expected = entry.tensorSha256.find(tensor.name);
    std::string got;
    hashRange(out.fd, out.header.dataStart + tensor.begin,
              out.header.dataStart + tensor.end, got);
    if (expected == entry.tensorSha256.end() || expected->second != got)
      return "checkpoint file '" + path + "' is corrupted: tensor '" +
             tensor.name + "' does not match its SHA-256 in the index";
  }
  return "checkpoint file '" + path +
         "' is corrupted: its header does not match the SHA-256 in the index";
}

} // namespace

std::string loadTrainState(zrt_context *ctx, const std::vector<void *> &buffers,
                           const std::string &path, TrainPosition &position,
                           std::string &resolved) {
  quiesceComm(ctx);
  TrainStateIndex index;
  std::string error = resolve(path, resolved);
  if (error.empty())
    error = parseIndex(resolved, index);
  if (error.empty())
    error = checkModel(ctx, index);
  error = agreeOnError(ctx, error);
  if (!error.empty())
    return error;

  // The files this rank reads: for every tensor, those holding its range.
  std::map<int, CheckedFile> files;
  auto fileOf = [&](int rank) -> CheckedFile * {
    auto it = files.find(rank);
    if (it != files.end())
      return it->second.fd >= 0 ? &it->second : nullptr;
    CheckedFile &file = files[rank];
    if (error.empty())
      error = openChecked(index, rank, file);
    return error.empty() ? &file : nullptr;
  };

  // Read everything into host memory first, so that a bad file leaves the
  // buffers untouched and every rank refuses together.
  std::vector<std::pair<size_t, std::vector<char>>> staged;
  for (size_t i = 0; i < ctx->args.size() && error.empty(); ++i) {
    const ArgDesc &arg = ctx->args[i];
    auto tensorIt = index.tensors.find(tensorKey(arg));
    if (!isSaved(arg) || tensorIt == index.tensors.end())
      continue;
    const IndexTensor &saved = tensorIt->second;
    int64_t numel = arg.numel(), bytes = elementBytes(arg);
    ArgSlice slice = argSlice(ctx, arg);
    std::vector<char> host(slice.count * bytes, 0);
    // The checkpoint's shard k of a sharded tensor is in the file of rank
    // k, for k below its shard group size (its world size without groups).
    int64_t oldShard =
        saved.sharded ? shardNumel(numel, index.shardGroupSize) : numel;
    int64_t end = std::min(slice.first + slice.count, numel);
    for (int64_t e = slice.first; e < end && error.empty();) {
      int rank = saved.sharded ? (int)(e / oldShard) : 0;
      int64_t runEnd = std::min(end, (int64_t)(rank + 1) * oldShard);
      CheckedFile *file = fileOf(rank);
      if (!file)
        break;
      const SafeTensor *tensor = file->header.find(tensorKey(arg));
      std::string where = index.path + "/" + rankFileName(rank);
      if (!tensor || tensor->dtype != saved.dtype ||
          tensor->numel() != oldShard) {
        error = "checkpoint file '" + where + "' does not hold tensor '" +
                tensorKey(arg) + "' as its index describes";
        break;
      }
      int64_t from =
          file->header.dataStart + tensor->begin +
          (e - (int64_t)rank * (saved.sharded ? oldShard : 0)) * bytes;
      int64_t count = (runEnd - e) * bytes;
      char *to = host.data() + (e - slice.first) * bytes;
      for (int64_t done = 0; done < count;) {
        ssize_t n = pread(file->fd, to + done, count - done, from + done);
        if (n <= 0) {
          error = "reading tensor '" + tensorKey(arg) + "' from '" + where +
                  "' failed: " + errnoText();
          break;
        }
        done += n;
      }
      e = runEnd;
    }
    staged.emplace_back(i, std::move(host));
  }
  for (auto &[rank, file] : files)
    if (file.fd >= 0)
      close(file.fd);
  error = agreeOnError(ctx, error);
  if (!error.empty())
    return error;
  for (auto &[i, host] : staged)
    copyToDevice(ctx, buffers[i], host.data(), host.size());
  position = index.position;
  return "";
}

} // namespace zrt
