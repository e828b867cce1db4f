//===- watchdog.cpp - What a rank says when a collective stalls -----------===//
//
// The side channel is plain TCP: each rank listens on an ephemeral port from
// the context's creation on (the kernel completes a connection even to a
// stopped process, so sending never waits on the peer); a rank whose
// watchdog fired connects to every other rank's port, writes one fixed-size
// message and closes, then accepts the others' messages until a deadline. A
// refused connection means the peer's process is gone. Every socket call is
// bounded by a deadline, and any failure counts as "no answer", never as a
// second error that would hide the first.
//
//===----------------------------------------------------------------------===//

#include "core/watchdog.h"
#include "core/check.h"
#include "core/context.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zrt {

std::string describePosition(const CollectiveInfo &info) {
  if (info.sequence > 0 && info.step > 0)
    return (info.validation ? "validation after step " : "step ") +
           std::to_string(info.step) + ", collective " +
           std::to_string(info.sequence);
  if (info.sequence > 0) // Outside the driver's steps (tests).
    return "collective " + std::to_string(info.sequence);
  if (info.step > 0)
    return "after step " + std::to_string(info.step);
  return "";
}

std::string describeTransfer(const CollectiveInfo &info) {
  std::string text = std::string(collectiveName(info.kind)) + " of " +
                     std::to_string(info.tensorBytes) + " bytes";
  if (info.label && *info.label)
    text += info.sequence > 0 ? std::string(" of \"") + info.label + "\""
                              : std::string(" (") + info.label + ")";
  if (info.group != ZRT_GROUP_WORLD)
    text += std::string(" over the ") + groupName(info.group) + " group";
  return text;
}

std::string describeCollective(const CollectiveInfo &info) {
  std::string position = describePosition(info);
  return position.empty() ? describeTransfer(info)
                          : position + ": " + describeTransfer(info);
}

namespace {

/// One message of the side channel: a position (step, collective, kind,
/// bytes; kind -1 when not known) or "my line is printed".
struct Message {
  int64_t magic, type, rank, step, validation, sequence, kind, bytes, group;
};
constexpr int64_t kMagic = 0x7a72745f77646f67; // "zrt_wdog"
enum MessageType : int64_t { kPosition = 1, kPrinted = 2 };
constexpr int kHostBytes = 256;

double secondsNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int millisecondsUntil(double deadline) {
  return std::max(0, int((deadline - secondsNow()) * 1000));
}

enum class Delivery { Sent, Refused, Failed };

/// Connects to `rank`'s listener, writes `message` and closes, by
/// `deadline`.
Delivery sendTo(const WatchdogChannel &channel, int self, int rank,
                const Message &message, double deadline) {
  if (channel.ports[rank] == 0)
    return Delivery::Failed;
  // A peer on this host is reached over loopback, whatever its name says.
  const std::string &host = channel.hosts[rank] == channel.hosts[self]
                                ? std::string("127.0.0.1")
                                : channel.hosts[rank];
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host.c_str(), std::to_string(channel.ports[rank]).c_str(),
                  &hints, &found) != 0 ||
      !found)
    return Delivery::Failed;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  Delivery result = Delivery::Failed;
  if (fd >= 0) {
    int status = connect(fd, found->ai_addr, found->ai_addrlen);
    if (status != 0 && errno == EINPROGRESS) {
      pollfd writable{fd, POLLOUT, 0};
      int error = 0;
      socklen_t length = sizeof(error);
      if (poll(&writable, 1, millisecondsUntil(deadline)) == 1 &&
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0)
        status = error == 0 ? 0 : -1, errno = error;
    }
    if (status == 0)
      // MSG_NOSIGNAL: a peer that died since would otherwise SIGPIPE us.
      result = send(fd, &message, sizeof(message), MSG_NOSIGNAL) ==
                       ssize_t(sizeof(message))
                   ? Delivery::Sent
                   : Delivery::Failed;
    else if (errno == ECONNREFUSED)
      result = Delivery::Refused;
    close(fd);
  }
  freeaddrinfo(found);
  return result;
}

/// Accepts connections until every rank of `from` has sent a message of
/// `type`, or `deadline`; messages of another type are kept for later.
void receiveFrom(const WatchdogChannel &channel, const std::vector<int> &from,
                 MessageType type, std::vector<std::vector<Message>> &inbox,
                 double deadline) {
  auto complete = [&] {
    return std::all_of(from.begin(), from.end(), [&](int rank) {
      return std::any_of(inbox[rank].begin(), inbox[rank].end(),
                         [&](const Message &m) { return m.type == type; });
    });
  };
  while (!complete() && secondsNow() < deadline) {
    pollfd incoming{channel.listener, POLLIN, 0};
    if (poll(&incoming, 1, millisecondsUntil(deadline)) != 1)
      continue;
    int fd = accept4(channel.listener, nullptr, nullptr,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    Message message{};
    size_t got = 0;
    // A peer writes its whole message right after connecting.
    double readDeadline = std::min(deadline, secondsNow() + 0.5);
    while (got < sizeof(message)) {
      pollfd readable{fd, POLLIN, 0};
      if (poll(&readable, 1, millisecondsUntil(readDeadline)) != 1)
        break;
      ssize_t n = read(fd, (char *)&message + got, sizeof(message) - got);
      if (n <= 0)
        break;
      got += n;
    }
    close(fd);
    if (got == sizeof(message) && message.magic == kMagic &&
        message.rank >= 0 && message.rank < (int64_t)inbox.size())
      inbox[message.rank].push_back(message);
  }
}

/// The message of `type` that `rank` sent, or null.
const Message *messageOf(const std::vector<std::vector<Message>> &inbox,
                         int rank, MessageType type) {
  for (const Message &m : inbox[rank])
    if (m.type == type)
      return &m;
  return nullptr;
}

/// "rank 1", "ranks 1 and 3", "ranks 0, 2 and 3".
std::string rankList(const std::vector<int> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0)
      text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

bool samePosition(const Message &a, const Message &b) {
  return a.step == b.step && a.validation == b.validation &&
         a.sequence == b.sequence && a.kind == b.kind && a.bytes == b.bytes &&
         a.group == b.group;
}

CollectiveInfo positionInfo(const Message &m) {
  CollectiveInfo info;
  info.step = m.step;
  info.validation = m.validation != 0;
  info.sequence = m.sequence;
  info.kind = int32_t(m.kind);
  info.tensorBytes = m.bytes;
  info.group = int32_t(m.group);
  return info;
}

} // namespace

void openWatchdogChannel(zrt_context *ctx) {
  WatchdogChannel &channel = ctx->watchdog;
  struct {
    char host[kHostBytes];
    int32_t port;
  } mine{}, *all = nullptr;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof(address);
  if (fd >= 0 && bind(fd, (sockaddr *)&address, sizeof(address)) == 0 &&
      listen(fd, 256) == 0 &&
      getsockname(fd, (sockaddr *)&address, &length) == 0) {
    channel.listener = fd;
    mine.port = ntohs(address.sin_port);
  } else if (fd >= 0) {
    close(fd);
  }
  gethostname(mine.host, kHostBytes - 1);
  std::vector<decltype(mine)> table(ctx->worldSize);
  all = table.data();
  ZRT_MPI_CHECK(MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine),
                              MPI_BYTE, ctx->comm));
  for (const auto &entry : table) {
    channel.hosts.emplace_back(entry.host, strnlen(entry.host, kHostBytes));
    channel.ports.push_back(entry.port);
  }
}

void closeWatchdogChannel(zrt_context *ctx) {
  if (ctx->watchdog.listener >= 0)
    close(ctx->watchdog.listener);
  ctx->watchdog = WatchdogChannel();
}

void stopStalledJob(zrt_context *ctx, const char *waiter,
                    const CollectiveInfo *stuck, double timeoutSeconds,
                    double waitedSeconds, const char *knob) {
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", timeoutSeconds);
  std::string line = std::string(waiter) + ": " +
                     (stuck ? describeCollective(*stuck)
                            : std::string("the next collective")) +
                     " did not complete within " + seconds + " s (" + knob +
                     ")";
  // A wait that outlasted its timeout by far was not running: this process
  // was stopped (or starved of the CPU), and is likely the one the others
  // are waiting for.
  bool selfStalled = waitedSeconds > 1.5 * timeoutSeconds + 1;
  if (selfStalled)
    line += "; this rank was itself stalled (the wait took " +
            std::to_string(int(waitedSeconds)) + " s)";
  const WatchdogChannel &channel = ctx->watchdog;
  if (channel.listener < 0 || ctx->worldSize < 2) {
    if (ctx->worldSize > 1)
      line += ": another rank has stalled, died or started a different "
              "collective";
    printError("%s", line.c_str());
    stopJob();
  }

  // Long enough for the peers' watchdogs, which started their waits at
  // slightly different times, to fire too; short enough to end the job
  // well within the timeout + 10 s.
  double grace = std::clamp(timeoutSeconds / 2, 1.0, 5.0);
  double deadline = secondsNow() + grace;
  Message mine{kMagic, kPosition, ctx->rank,
               stuck ? stuck->step : ctx->position.step,
               stuck ? stuck->validation : ctx->position.validation,
               stuck ? stuck->sequence : -1,
               stuck ? stuck->kind : -1,
               stuck ? stuck->tensorBytes : 0,
               stuck ? stuck->group : 0};
  std::vector<int> others, gone;
  for (int r = 0; r < ctx->worldSize; ++r)
    if (r != ctx->rank)
      others.push_back(r);
  for (int r : others)
    if (sendTo(channel, ctx->rank, r, mine, deadline) == Delivery::Refused)
      gone.push_back(r);
  std::vector<std::vector<Message>> inbox(ctx->worldSize);
  receiveFrom(channel, others, kPosition, inbox, deadline);

  std::vector<int> same, missing, responders;
  std::string elsewhere;
  for (int r : others) {
    const Message *theirs = messageOf(inbox, r, kPosition);
    if (!theirs) {
      if (std::find(gone.begin(), gone.end(), r) == gone.end())
        missing.push_back(r);
      continue;
    }
    responders.push_back(r);
    if (samePosition(*theirs, mine)) {
      same.push_back(r);
      continue;
    }
    elsewhere += "; rank " + std::to_string(r) + " waits at " +
                 (theirs->kind < 0 ? std::string("a collective not known")
                                   : describeCollective(positionInfo(*theirs))) +
                 " instead";
  }
  if (!same.empty())
    line += "; " + rankList(same) + (same.size() == 1 ? " waits" : " wait") +
            " at it too";
  line += elsewhere;
  if (!gone.empty())
    line += "; " + rankList(gone) + (gone.size() == 1 ? " has" : " have") +
            " exited";
  if (!missing.empty())
    line += "; " + rankList(missing) + " did not arrive (no answer within " +
            std::to_string(int(grace)) +
            " s: stopped, stuck outside the collective, or dead)";
  else if (elsewhere.empty() && gone.empty() && !selfStalled)
    line += "; every rank waits at it: the transport itself is stuck";
  printError("%s", line.c_str());

  // Let every rank that answered print its line before the first abort
  // takes the job down.
  double printedBy = secondsNow() + 2.0;
  Message printed{kMagic, kPrinted, ctx->rank, 0, 0, 0, 0, 0, 0};
  for (int r : responders)
    sendTo(channel, ctx->rank, r, printed, printedBy);
  receiveFrom(channel, responders, kPrinted, inbox, printedBy);
  stopJob();
}

} // namespace zrt
