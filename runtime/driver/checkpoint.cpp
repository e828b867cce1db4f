//===- checkpoint.cpp - Loading and saving parameters (safetensors) -------===//

#include "driver/checkpoint.h"
#include "core/agree.h"
#include "core/check.h"
#include "core/convert.h"
#include "core/device.h"
#include "core/program.h"
#include "driver/files.h"
#include "driver/safetensors.h"
#include "driver/tokens.h"
#include "driver/weight_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

namespace zrt {

static std::string str(int64_t value) { return std::to_string(value); }

//===--- Loading ----------------------------------------------------------===//

/// A tensor of the program by its name, or by Hugging Face GPT-2's.
static WeightFiles::Located lookup(const WeightFiles &weights,
                                   const std::string &name) {
  WeightFiles::Located found = weights.find(name);
  return found.tensor ? found : weights.find("transformer." + name);
}

/// Converts `n` elements of a file dtype to float32.
static void widen(const std::string &dtype, const unsigned char *in, int64_t n,
                  float *out) {
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == "F32") {
      std::memcpy(&out[i], in + 4 * i, 4);
    } else {
      uint16_t bits = (uint16_t)(in[2 * i] | in[2 * i + 1] << 8);
      out[i] = dtype == "BF16" ? bf16BitsToFloat(bits) : f16BitsToFloat(bits);
    }
  }
}

/// Reads this rank's slice of `tensor` into the buffer of `arg`; the
/// padding past the tensor's end stays zero.
static std::string loadSlice(const zrt_context *ctx, int fd,
                             const SafeTensorsFile &file,
                             const SafeTensor &tensor, const ArgDesc &arg,
                             void *buffer) {
  ArgSlice slice = argSlice(ctx, arg);
  int64_t end = std::min(slice.first + slice.count, arg.numel());
  int64_t bytes = safeDtypeBytes(tensor.dtype);
  const int64_t chunk = 1 << 16;
  std::vector<unsigned char> raw;
  std::vector<float> values;
  for (int64_t first = slice.first; first < end; first += chunk) {
    int64_t n = std::min(chunk, end - first);
    raw.resize(n * bytes);
    values.resize(n);
    int64_t offset = file.dataStart + tensor.begin + first * bytes;
    if (!readAt(fd, offset, raw.data(), n * bytes))
      return "cannot read tensor '" + tensor.name + "' of '" + file.path +
             "' at byte " + str(offset);
    widen(tensor.dtype, raw.data(), n, values.data());
    storeFloatsTo(ctx, arg.dtype, values.data(), buffer, first - slice.first,
                  n);
  }
  return "";
}

static std::string checkTensor(const SafeTensorsFile &file,
                               const SafeTensor &tensor, const ArgDesc &arg) {
  std::string where = "'" + file.path + "': tensor '" + tensor.name + "'";
  if (tensor.dtype != "F32" && tensor.dtype != "BF16" && tensor.dtype != "F16")
    return where + " has dtype " + tensor.dtype +
           "; parameters load from F32, BF16 or F16";
  std::vector<int64_t> want(arg.dims.begin(), arg.dims.begin() + arg.rank);
  if (tensor.shape != want)
    return where + " has shape " +
           shapeString(tensor.shape.data(), tensor.shape.size()) +
           " but the program's " + roleName(arg.role) + " '" + arg.name +
           "' has shape " + shapeString(want.data(), want.size());
  return "";
}

static std::string loadAll(const zrt_context *ctx,
                           const std::vector<void *> &buffers,
                           const WeightFiles &weights, std::string &unused) {
  std::map<const SafeTensorsFile *, int> fds; // opened as tensors need them
  std::set<std::string> used;
  std::string error;
  for (size_t i = 0; i < ctx->args.size() && error.empty(); ++i) {
    const ArgDesc &arg = ctx->args[i];
    if (arg.role != ZRT_ROLE_PARAM && arg.role != ZRT_ROLE_MASTER)
      continue;
    WeightFiles::Located found = lookup(weights, arg.name);
    if (!found.tensor) {
      error = "'" + weights.source + "' has no tensor '" + arg.name +
              "' (nor 'transformer." + arg.name + "') for the program's " +
              roleName(arg.role);
      break;
    }
    used.insert(found.tensor->name);
    error = checkTensor(*found.file, *found.tensor, arg);
    if (!error.empty())
      break;
    auto fd = fds.find(found.file);
    if (fd == fds.end()) {
      int opened = open(found.file->path.c_str(), O_RDONLY | O_CLOEXEC);
      if (opened < 0) {
        error =
            "cannot open '" + found.file->path + "': " + std::strerror(errno);
        break;
      }
      fd = fds.emplace(found.file, opened).first;
    }
    error =
        loadSlice(ctx, fd->second, *found.file, *found.tensor, arg, buffers[i]);
  }
  for (const auto &entry : fds)
    close(entry.second);
  std::vector<std::string> names;
  for (const SafeTensorsFile &file : weights.files)
    for (const SafeTensor &tensor : file.tensors)
      if (!used.count(tensor.name))
        names.push_back(tensor.name);
  unused.clear();
  for (size_t i = 0; i < names.size() && i < 5; ++i)
    unused += (i ? ", " : "") + names[i];
  if (names.size() > 5)
    unused += " and " + str(names.size() - 5) + " more";
  if (!names.empty())
    unused = "'" + weights.source + "' has " + str(names.size()) +
             (names.size() == 1 ? " tensor" : " tensors") +
             " this program does not use: " + unused;
  return error;
}

std::string loadParams(zrt_context *ctx, const std::vector<void *> &buffers,
                       const std::string &path, std::string &unused) {
  WeightFiles weights;
  unused.clear();
  std::string error = openWeightFiles(path, weights);
  if (error.empty())
    error = loadAll(ctx, buffers, weights, unused);
  return agreeOnError(ctx, error);
}

//===--- Saving -----------------------------------------------------------===//

namespace {

/// What rank 0 writes; it keeps the first error and writes nothing after
/// it, but the ranks still take part in every gather so that none waits.
struct Writer {
  std::string path, temporary;
  int fd = -1;
  std::string error;

  void write(int64_t offset, const void *data, int64_t bytes) {
    auto *in = (const char *)data;
    while (error.empty() && bytes > 0) {
      errno = 0;
      ssize_t done = pwrite(fd, in, bytes, offset);
      if (done < 0 && errno == EINTR)
        continue;
      if (done <= 0)
        fail("writing '" + temporary + "' failed");
      in += done;
      offset += done;
      bytes -= done;
    }
  }

  void fail(const std::string &what) {
    if (error.empty())
      error = "cannot save '" + path + "': " + what + ": " +
              std::strerror(errno ? errno : EIO);
  }
};

struct SaveItem {
  SafeTensor tensor;
  size_t arg; // the buffer saved: the master when there is one
};

} // namespace

static std::vector<SaveItem> saveList(const zrt_context *ctx) {
  std::vector<SaveItem> items;
  int64_t offset = 0;
  for (size_t i = 0; i < ctx->args.size(); ++i) {
    const ArgDesc &param = ctx->args[i];
    if (param.role != ZRT_ROLE_PARAM)
      continue;
    int64_t master = findMaster(ctx, param.name);
    size_t source = master >= 0 ? master : i;
    const ArgDesc &arg = ctx->args[source];
    SaveItem item{{}, source};
    item.tensor.name = param.name;
    item.tensor.dtype = arg.dtype == ZRT_BF16 ? "BF16" : "F32";
    item.tensor.shape.assign(arg.dims.begin(), arg.dims.begin() + arg.rank);
    item.tensor.begin = offset;
    offset += arg.numel() * dtypeBytes(arg.dtype);
    item.tensor.end = offset;
    items.push_back(item);
  }
  return items;
}

/// Bytes of one rank's part of a gather: rank 0 holds G times this (one
/// part per shard), so it shrinks as the job grows. ZRT_SAVE_CHUNK_BYTES
/// lets tests force many chunks on tiny tensors.
static int64_t chunkBytes(const zrt_context *ctx) {
  int64_t bytes = (int64_t)64 << 20;
  if (const char *knob = std::getenv("ZRT_SAVE_CHUNK_BYTES"))
    bytes = std::max(1LL, std::atoll(knob));
  return std::max<int64_t>(4, bytes / shardCount(ctx));
}

static void saveTensor(zrt_context *ctx, Writer &writer, int64_t dataStart,
                       const SaveItem &item, const void *buffer) {
  const ArgDesc &arg = ctx->args[item.arg];
  int64_t numel = arg.numel(), bytes = dtypeBytes(arg.dtype);
  int64_t where = dataStart + item.tensor.begin;
  int64_t shards = shardCount(ctx);
  if (!arg.sharded || shards == 1) {
    if (ctx->rank == 0) {
      HostBuffer host(ctx, const_cast<void *>(buffer), numel * bytes,
                      /*load=*/true);
      writer.write(where, host.data(), numel * bytes);
    }
    return;
  }
  // Ranks 0 to G - 1, the first shard group, hold every shard once; the
  // other groups hold copies of them and take no part.
  if (ctx->rank >= shards)
    return;
  int64_t s = shardNumel(numel, shards);
  int64_t per = std::max<int64_t>(1, chunkBytes(ctx) / bytes);
  std::vector<char> staging;
  if (ctx->rank == 0)
    staging.resize(shards * std::min(per, s) * bytes);
  for (int64_t k = 0; k < s; k += per) {
    int64_t n = std::min(per, s - k);
    HostBuffer part(ctx, (char *)const_cast<void *>(buffer) + k * bytes,
                    n * bytes, /*load=*/true);
    ZRT_MPI_CHECK(MPI_Gather(part.data(), (int)(n * bytes), MPI_BYTE,
                             staging.data(), (int)(n * bytes), MPI_BYTE, 0,
                             ctx->groups[ZRT_GROUP_SHARD].comm));
    if (ctx->rank != 0)
      continue;
    for (int r = 0; r < shards; ++r) {
      int64_t first = r * s + k;
      int64_t count = std::min(n, numel - first); // drop the padding
      if (count > 0)
        writer.write(where + first * bytes, &staging[r * n * bytes],
                     count * bytes);
    }
  }
}

/// Makes the written file durable and puts it in place of `path`.
static void finish(Writer &writer) {
  if (writer.error.empty() && fsync(writer.fd) != 0)
    writer.fail("syncing '" + writer.temporary + "' failed");
  if (close(writer.fd) != 0)
    writer.fail("closing '" + writer.temporary + "' failed");
  if (writer.error.empty() &&
      rename(writer.temporary.c_str(), writer.path.c_str()) != 0)
    writer.fail("renaming '" + writer.temporary + "' failed");
  if (!writer.error.empty()) {
    unlink(writer.temporary.c_str());
    return;
  }
  // The rename is only durable once the directory is synced.
  syncDirectoryOf(writer.path);
}

std::string exportHuggingFace(zrt_context *ctx,
                              const std::vector<void *> &buffers,
                              const std::string &dir) {
  std::string error;
  if (ctx->rank == 0 && mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    error = "cannot create directory '" + dir + "': " + std::strerror(errno);
  error = agreeOnError(ctx, error);
  if (error.empty())
    error = saveParams(ctx, buffers, dir + "/model.safetensors");
  if (!error.empty())
    return error;
  if (ctx->rank == 0)
    error = writeFileAtomically(dir + "/config.json", ctx->program.hfConfig);
  return agreeOnError(ctx, error);
}

std::string saveParams(zrt_context *ctx, const std::vector<void *> &buffers,
                       const std::string &path) {
  quiesceComm(ctx);
  std::vector<SaveItem> items = saveList(ctx);
  std::vector<SafeTensor> tensors;
  for (const SaveItem &item : items)
    tensors.push_back(item.tensor);
  std::string header = safeTensorsHeader(tensors);
  Writer writer;
  writer.path = path;
  writer.temporary = path + ".tmp";
  // A file-size limit would kill rank 0 by SIGXFSZ mid-write; ignored, the
  // write fails with EFBIG and is reported like a full disk.
  void (*previous)(int) = SIG_DFL;
  if (ctx->rank == 0) {
    previous = std::signal(SIGXFSZ, SIG_IGN);
    errno = 0;
    writer.fd = open(writer.temporary.c_str(),
                     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (writer.fd < 0)
      writer.fail("cannot create '" + writer.temporary + "'");
  }
  std::string error = agreeOnError(ctx, writer.error);
  if (!error.empty())
    return error;
  if (ctx->rank == 0)
    writer.write(0, header.data(), header.size());
  for (const SaveItem &item : items)
    saveTensor(ctx, writer, header.size(), item, buffers[item.arg]);
  if (ctx->rank == 0) {
    finish(writer);
    std::signal(SIGXFSZ, previous);
  }
  return agreeOnError(ctx, writer.error);
}

} // namespace zrt
