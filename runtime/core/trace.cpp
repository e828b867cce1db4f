//===- trace.cpp - --trace: a Chrome/Perfetto timeline of the run ---------===//
//
// The file is the Chrome trace-event format's JSON object form: one process
// per rank (pid = rank, named "rank N"), thread 0 "compute", thread 1
// "comm" and, when there are host tasks, thread 2 "host tasks", complete
// ("X") events with ts and dur in microseconds since the
// barrier every rank passed when tracing began.
//
//===----------------------------------------------------------------------===//

#include "core/trace.h"
#include "core/agree.h"
#include "core/check.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

namespace zrt {

Tracer::Tracer(zrt_context *ctx) {
  if (ctx->comm != MPI_COMM_NULL) {
    quiesceComm(ctx);
    ZRT_MPI_CHECK(MPI_Barrier(ctx->comm));
  }
  zero = std::chrono::steady_clock::now();
}

void Tracer::record(Track track, std::string name, const char *category,
                    int64_t begin, int64_t end, int64_t bytes, int32_t group) {
  events[track].push_back(
      {std::move(name), category, begin, end, bytes, group});
}

/// Names are the runtime's own, but a quote or backslash must still not
/// break the file.
static void appendString(std::string &out, const std::string &text) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if ((unsigned char)c >= 0x20)
      out += c;
  }
  out += '"';
}

static void appendMetadata(std::string &out, int rank, int tid,
                           const char *what, const std::string &name) {
  char head[96];
  std::snprintf(head, sizeof(head),
                "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\","
                "\"args\":{\"name\":",
                rank, tid, what);
  out += head;
  appendString(out, name);
  out += "}},\n";
}

std::string Tracer::eventsJson(int rank) const {
  std::string out;
  appendMetadata(out, rank, 0, "process_name", "rank " + std::to_string(rank));
  appendMetadata(out, rank, 0, "thread_name", "compute");
  appendMetadata(out, rank, 1, "thread_name", "comm");
  if (!events[Host].empty())
    appendMetadata(out, rank, Host, "thread_name", "host tasks");
  char numbers[160];
  for (int track = 0; track < kNumTracks; ++track) {
    for (const Event &e : events[track]) {
      out += "{\"name\":";
      appendString(out, e.name);
      std::snprintf(numbers, sizeof(numbers),
                    ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                    "\"ts\":%.3f,\"dur\":%.3f",
                    e.category, rank, track, e.begin / 1e3,
                    (e.end - e.begin) / 1e3);
      out += numbers;
      if (e.bytes >= 0 && e.group >= 0)
        out += ",\"args\":{\"counted_bytes\":" + std::to_string(e.bytes) +
               ",\"group\":\"" + groupName(e.group) + "\"}";
      else if (e.bytes >= 0)
        out += ",\"args\":{\"counted_bytes\":" + std::to_string(e.bytes) + "}";
      out += "},\n";
    }
  }
  return out;
}

void Tracer::commExposure(int64_t &exposedNs, int64_t &totalNs) const {
  // Kernels on one thread do not overlap, but merging costs little and
  // keeps the answer right should one kernel ever call another.
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (const Event &e : events[Compute])
    if (std::strcmp(e.category, "kernel") == 0)
      busy.push_back({e.begin, e.end});
  std::sort(busy.begin(), busy.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (auto interval : busy) {
    if (!merged.empty() && interval.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, interval.second);
    else
      merged.push_back(interval);
  }
  exposedNs = totalNs = 0;
  for (const Event &e : events[Comm]) {
    int64_t hidden = 0;
    auto it = std::upper_bound(merged.begin(), merged.end(),
                               std::make_pair(e.begin, INT64_MIN));
    if (it != merged.begin())
      --it;
    for (; it != merged.end() && it->first < e.end; ++it)
      hidden += std::max<int64_t>(0, std::min(e.end, it->second) -
                                         std::max(e.begin, it->first));
    totalNs += e.end - e.begin;
    exposedNs += e.end - e.begin - hidden;
  }
}

std::string commLabel(const char *kind, int64_t bytes, const char *label) {
  char text[64];
  if (bytes < 1000)
    std::snprintf(text, sizeof(text), "%s %lld B", kind, (long long)bytes);
  else if (bytes < 1000000)
    std::snprintf(text, sizeof(text), "%s %.1f kB", kind, bytes / 1e3);
  else
    std::snprintf(text, sizeof(text), "%s %.1f MB", kind, bytes / 1e6);
  return label && *label ? std::string(text) + " " + label : text;
}

static std::string traceError(const std::string &what) {
  return "cannot write the trace: " + what + ": " +
         std::strerror(errno ? errno : EIO);
}

std::string checkTracePath(const std::string &path) {
  std::string temporary = path + ".tmp";
  errno = 0;
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return traceError("cannot create '" + temporary + "'");
  close(fd);
  unlink(temporary.c_str());
  return "";
}

/// Rank 0: the file, through a temporary and a rename, so a reader never
/// sees half a trace.
static std::string writeFile(const std::string &path,
                             const std::vector<std::string> &ranks) {
  std::string temporary = path + ".tmp";
  errno = 0;
  FILE *file = std::fopen(temporary.c_str(), "w");
  if (!file)
    return traceError("cannot create '" + temporary + "'");
  std::string text = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  for (const std::string &events : ranks)
    text += events;
  // The last event's ",\n" would make the array invalid JSON.
  if (text.size() >= 2 && text.compare(text.size() - 2, 2, ",\n") == 0)
    text.resize(text.size() - 2);
  text += "\n]}\n";
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok &= std::fflush(file) == 0;
  ok &= std::fclose(file) == 0;
  if (!ok) {
    std::string error = traceError("writing '" + temporary + "' failed");
    unlink(temporary.c_str());
    return error;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string error =
        traceError("renaming '" + temporary + "' to '" + path + "' failed");
    unlink(temporary.c_str());
    return error;
  }
  return "";
}

/// Rank 0 receives every rank's events, in chunks that fit an int count.
static std::vector<std::string> gatherEvents(zrt_context *ctx,
                                             std::string mine) {
  int64_t length = mine.size();
  std::vector<int64_t> lengths(ctx->worldSize, length);
  ZRT_MPI_CHECK(MPI_Gather(&length, 1, MPI_INT64_T, lengths.data(), 1,
                           MPI_INT64_T, 0, ctx->comm));
  const int64_t chunk = INT_MAX / 2;
  std::vector<std::string> all;
  if (ctx->rank != 0) {
    for (int64_t at = 0; at < length; at += chunk)
      ZRT_MPI_CHECK(MPI_Send(mine.data() + at,
                             (int)std::min(chunk, length - at), MPI_CHAR, 0,
                             /*tag=*/0, ctx->comm));
    return all;
  }
  all.push_back(std::move(mine));
  for (int r = 1; r < ctx->worldSize; ++r) {
    std::string events(lengths[r], '\0');
    for (int64_t at = 0; at < lengths[r]; at += chunk)
      ZRT_MPI_CHECK(MPI_Recv(&events[at], (int)std::min(chunk, lengths[r] - at),
                             MPI_CHAR, r, /*tag=*/0, ctx->comm,
                             MPI_STATUS_IGNORE));
    all.push_back(std::move(events));
  }
  return all;
}

/// Rank 0: the rank whose collectives the kernels hid least decides.
static void printExposure(zrt_context *ctx) {
  int64_t mine[2];
  ctx->tracer->commExposure(mine[0], mine[1]);
  std::vector<int64_t> all(2 * ctx->worldSize);
  if (ctx->comm == MPI_COMM_NULL)
    std::copy(mine, mine + 2, all.begin());
  else
    ZRT_MPI_CHECK(MPI_Gather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T,
                             0, ctx->comm));
  if (ctx->rank != 0)
    return;
  int worst = 0;
  for (int r = 1; r < ctx->worldSize; ++r)
    if (all[2 * r] > all[2 * worst])
      worst = r;
  double exposed = all[2 * worst] / 1e6, total = all[2 * worst + 1] / 1e6;
  std::printf("comm exposed: %.3f ms of %.3f ms collective time not hidden "
              "behind compute (%.1f%%)\n",
              exposed, total, total > 0 ? 100.0 * exposed / total : 0.0);
  // On a device the host only launches: the slices time the launches, and
  // the line above compares launch times, not the device's execution.
  if (!ctx->runtime->hostAddressable())
    std::printf("trace: on the GPU, kernel and collective slices are host "
                "launch times (the GPU runs them asynchronously), not GPU "
                "execution times\n");
  std::fflush(stdout);
}

std::string writeTrace(zrt_context *ctx, const std::string &path) {
  quiesceComm(ctx);
  std::string mine = ctx->tracer->eventsJson(ctx->rank);
  std::vector<std::string> ranks;
  if (ctx->comm == MPI_COMM_NULL)
    ranks.push_back(std::move(mine));
  else
    ranks = gatherEvents(ctx, std::move(mine));
  std::string error;
  if (ctx->rank == 0)
    error = writeFile(path, ranks);
  error = agreeOnError(ctx, error);
  if (error.empty())
    printExposure(ctx);
  return error;
}

} // namespace zrt
