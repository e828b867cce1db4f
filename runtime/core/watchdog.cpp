//===- watchdog.cpp - What a rank says when a collective stalls -----------===//
//
// The exchange runs on ctx->watchdogComm, a duplicate of the context's
// communicator that nothing else uses, with nonblocking point-to-point calls
// polled against a deadline: a peer that is stopped or dead cannot make it
// wait longer than the grace. Its MPI calls are not checked with
// ZRT_MPI_CHECK: a failure there (a peer's process gone) means "no answer",
// not a second error that would hide the first.
//
//===----------------------------------------------------------------------===//

#include "core/watchdog.h"
#include "core/check.h"
#include "core/context.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

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
  return text;
}

std::string describeCollective(const CollectiveInfo &info) {
  std::string position = describePosition(info);
  return position.empty() ? describeTransfer(info)
                          : position + ": " + describeTransfer(info);
}

namespace {

/// A position as the ranks exchange it: kind -1 when not known.
enum { kStep, kValidation, kSequence, kKind, kBytes, kPositionSize };
constexpr int kPositionTag = 7301, kPrintedTag = 7302;

double secondsNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Sends `message` to every rank in `to` and receives one from each rank in
/// `from` into `received` (kPositionSize int64s a rank), for at most
/// `graceSeconds`. Returns which ranks' messages arrived.
std::vector<bool> exchange(MPI_Comm comm, const std::vector<int> &to,
                           const std::vector<int> &from, const int64_t *message,
                           int tag, std::vector<int64_t> &received,
                           double graceSeconds) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  received.assign(size * kPositionSize, 0);
  std::vector<MPI_Request> receives(size, MPI_REQUEST_NULL);
  for (int peer : from)
    MPI_Irecv(&received[peer * kPositionSize], kPositionSize, MPI_INT64_T, peer,
              tag, comm, &receives[peer]);
  // Sends are never waited for: a stopped peer may never take them, and the
  // job ends soon after.
  for (int peer : to) {
    MPI_Request send;
    if (MPI_Isend(message, kPositionSize, MPI_INT64_T, peer, tag, comm,
                  &send) == MPI_SUCCESS)
      MPI_Request_free(&send);
  }
  std::vector<bool> arrived(size, false);
  size_t pending = from.size();
  double deadline = secondsNow() + graceSeconds;
  while (pending > 0 && secondsNow() < deadline) {
    for (int peer : from) {
      if (arrived[peer])
        continue;
      int done = 0;
      if (MPI_Test(&receives[peer], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
          done) {
        arrived[peer] = true;
        --pending;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return arrived;
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

CollectiveInfo positionInfo(const int64_t *position) {
  CollectiveInfo info;
  info.step = position[kStep];
  info.validation = position[kValidation] != 0;
  info.sequence = position[kSequence];
  info.kind = int32_t(position[kKind]);
  info.tensorBytes = position[kBytes];
  return info;
}

} // namespace

void stopStalledJob(zrt_context *ctx, const char *waiter,
                    const CollectiveInfo *stuck, double timeoutSeconds,
                    const char *knob, bool mpiBusy) {
  std::string line = std::string(waiter) + ": " +
                     (stuck ? describeCollective(*stuck)
                            : std::string("the next collective")) +
                     " did not complete within " + std::to_string(timeoutSeconds);
  // std::to_string(double) prints six decimals; drop the trailing zeros.
  while (line.back() == '0')
    line.pop_back();
  if (line.back() == '.')
    line.pop_back();
  line += std::string(" s (") + knob + ")";

  bool canAsk = ctx->watchdogComm != MPI_COMM_NULL && ctx->worldSize > 1 &&
                (!mpiBusy || mpiThreadMultiple());
  if (!canAsk) {
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
  int64_t mine[kPositionSize] = {ctx->position.step,
                                 ctx->position.validation,
                                 stuck ? stuck->sequence : -1,
                                 stuck ? stuck->kind : -1,
                                 stuck ? stuck->tensorBytes : 0};
  if (stuck) {
    mine[kStep] = stuck->step;
    mine[kValidation] = stuck->validation;
  }
  std::vector<int> others;
  for (int r = 0; r < ctx->worldSize; ++r)
    if (r != ctx->rank)
      others.push_back(r);
  std::vector<int64_t> positions;
  std::vector<bool> answered = exchange(ctx->watchdogComm, others, others,
                                        mine, kPositionTag, positions, grace);

  std::vector<int> same, missing, responders;
  std::string elsewhere;
  for (int r : others) {
    if (!answered[r]) {
      missing.push_back(r);
      continue;
    }
    responders.push_back(r);
    const int64_t *theirs = &positions[r * kPositionSize];
    if (std::equal(theirs, theirs + kPositionSize, mine)) {
      same.push_back(r);
      continue;
    }
    elsewhere += "; rank " + std::to_string(r) + " waits at " +
                 (theirs[kKind] < 0 ? std::string("a collective not known")
                                    : describeCollective(positionInfo(theirs))) +
                 " instead";
  }
  if (!same.empty())
    line += "; " + rankList(same) + (same.size() == 1 ? " waits" : " wait") +
            " at it too";
  line += elsewhere;
  if (!missing.empty())
    line += "; " + rankList(missing) + " did not arrive (no answer within " +
            std::to_string(int(grace)) +
            " s: stopped, stuck outside the collective, or dead)";
  else if (elsewhere.empty())
    line += "; every rank waits at it: the transport itself is stuck";
  printError("%s", line.c_str());

  // Let every rank that answered print its line before the first abort
  // takes the job down.
  int64_t printed[kPositionSize] = {1, 0, 0, 0, 0};
  exchange(ctx->watchdogComm, responders, responders, printed, kPrintedTag,
           positions, 2.0);
  stopJob();
}

} // namespace zrt
