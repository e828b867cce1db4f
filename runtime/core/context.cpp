//===- context.cpp - Context lifetime -------------------------------------===//

#include "core/context.h"
#include "core/check.h"
#include "core/comm_queue.h"
#include "core/device.h"
#include "core/host_tasks.h"
#include "core/schedule_check.h"
#include "core/trace.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace zrt {

const char *categoryName(int category) {
  static const char *const names[ZRT_MEM_NUM_CATEGORIES] = {
      "param", "grad",           "optimizer",   "activation",
      "comm",  "data",           "host_optimizer", "host_staging"};
  if (category < 0 || category >= ZRT_MEM_NUM_CATEGORIES)
    return "invalid";
  return names[category];
}

const char *arenaName(int index) {
  return index == ZRT_ARENA_SHARED ? "shared" : categoryName(index);
}

const char *groupName(int group) {
  static const char *const names[ZRT_NUM_GROUPS] = {"world", "shard",
                                                    "replica"};
  if (group < 0 || group >= ZRT_NUM_GROUPS)
    return "invalid";
  return names[group];
}

/// The groups of a program without shard groups: SHARD is WORLD (the same
/// communicator, so its collectives are WORLD's), REPLICA this rank alone.
static void flatGroups(zrt_context *ctx) {
  CommGroup world{ctx->comm, ctx->rank, ctx->worldSize, /*owned=*/false};
  ctx->groups[ZRT_GROUP_WORLD] = world;
  ctx->groups[ZRT_GROUP_SHARD] = world;
  ctx->groups[ZRT_GROUP_REPLICA] = CommGroup();
}

static const CollectiveSpec kCollectiveSpecs[NumCollectiveKinds] = {
#define ZRT_COLLECTIVE(KIND, name, RuntimeName, shape, ...)                    \
  {#name, "zrt_" #name, CollectiveShape::shape},
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
};

const CollectiveSpec &collectiveSpec(CollectiveKind kind) {
  return kCollectiveSpecs[kind];
}

const char *collectiveName(int kind) {
  if (kind < 0 || kind >= NumCollectiveKinds)
    return "invalid";
  return kCollectiveSpecs[kind].name;
}

zrt_context *createContext(MPI_Comm comm) {
  // Collectives run on a second thread; below SERIALIZED, MPI may not even
  // be called from a thread other than the one that initialised it.
  int provided = MPI_THREAD_SINGLE;
  ZRT_MPI_CHECK(MPI_Query_thread(&provided));
  if (provided < MPI_THREAD_SERIALIZED)
    fatal("MPI was initialised with thread level %s; libzrt runs collectives "
          "on a communication thread and needs MPI_THREAD_SERIALIZED (use "
          "zrt::initMpi, not MPI_Init)",
          threadLevelName(provided));
  auto *ctx = new zrt_context();
  ctx->schedule = std::make_unique<ScheduleCheck>();
  ZRT_MPI_CHECK(MPI_Comm_dup(comm, &ctx->comm));
  ZRT_MPI_CHECK(MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN));
  ZRT_MPI_CHECK(MPI_Comm_rank(ctx->comm, &ctx->rank));
  ZRT_MPI_CHECK(MPI_Comm_size(ctx->comm, &ctx->worldSize));
  flatGroups(ctx);
  openWatchdogChannel(ctx);
  ctx->commQueue = std::make_unique<CommQueue>(/*threaded=*/true, ctx);
  ctx->commQueue->setTimeout(collectiveTimeoutSeconds());
  ctx->hostTasks = std::make_unique<HostTasks>(hostTasksThreaded());
  attachHostBackend(ctx);
  return ctx;
}

bool hostTasksThreaded() {
  const char *text = std::getenv("ZRT_HOST_TASKS");
  if (!text || !*text || std::strcmp(text, "thread") == 0)
    return true;
  if (std::strcmp(text, "inline") == 0)
    return false;
  fatal("ZRT_HOST_TASKS must be 'thread' (the default: host tasks overlap "
        "the step) or 'inline' (each runs where it is queued), got '%s'",
        text);
}

double collectiveTimeoutSeconds() {
  const char *text = std::getenv("ZRT_COLLECTIVE_TIMEOUT_S");
  if (!text || !*text)
    return 300;
  char *end = nullptr;
  double seconds = std::strtod(text, &end);
  if (*end || !std::isfinite(seconds) || seconds <= 0)
    fatal("ZRT_COLLECTIVE_TIMEOUT_S must be a positive number of seconds, "
          "got '%s'",
          text);
  return seconds;
}

zrt_context *createLocalContext(int rank, int worldSize) {
  auto *ctx = new zrt_context();
  ctx->schedule = std::make_unique<ScheduleCheck>();
  ctx->rank = rank;
  ctx->worldSize = worldSize;
  flatGroups(ctx);
  ctx->commQueue = std::make_unique<CommQueue>(/*threaded=*/false, ctx);
  ctx->hostTasks = std::make_unique<HostTasks>(/*threaded=*/false);
  attachHostBackend(ctx);
  return ctx;
}

void quiesceComm(zrt_context *ctx) { ctx->commQueue->drain(); }

void quiesceHostTasks(zrt_context *ctx) {
  ctx->hostTasks->drain();
  ctx->runtime->finishUploads();
}

/// A program that starts a collective and never waits for it may have
/// touched its buffers while it ran; say so rather than let it pass quietly.
static void warnUnwaited(zrt_context *ctx) {
  std::vector<int64_t> handles = ctx->runtime->unwaited();
  if (handles.empty())
    return;
  std::string list;
  for (size_t i = 0; i < handles.size() && i < 8; ++i)
    list += (i ? ", " : "") + std::to_string(handles[i]);
  if (handles.size() > 8)
    list += ", ...";
  std::fprintf(stderr,
               "warning: [rank %d] %zu collectives were started but never "
               "waited for (handles %s)\n",
               ctx->rank, handles.size(), list.c_str());
}

void destroyContext(zrt_context *ctx) {
  if (!ctx)
    return;
  // The host tasks write parameters and optimizer state: finish them
  // before anything is freed.
  quiesceHostTasks(ctx);
  ctx->hostTasks.reset();
  // The queued collectives are ones every rank started: run them, so the
  // other ranks are not left waiting, before the thread and MPI go away.
  // On a device they are already queued on its stream: wait for them there.
  ctx->commQueue->drain();
  ctx->runtime->synchronize();
  warnUnwaited(ctx);
  ctx->commQueue.reset();
  for (auto &entry : ctx->allocations) {
    if (entry.second.inArena)
      continue;
    if (entry.second.host)
      ctx->runtime->releaseHost(entry.first);
    else
      ctx->runtime->release(entry.first);
  }
  ctx->allocations.clear();
  for (int index = 0; index <= ZRT_ARENA_SHARED; ++index) {
    char *base = ctx->arenas[index].base;
    if (!base)
      continue;
    if (zrt_mem_category_is_host(index))
      ctx->runtime->releaseHost(base);
    else
      ctx->runtime->release(base);
  }
  ctx->kernels = nullptr;
  ctx->runtime.reset();
  for (CommGroup &group : ctx->groups)
    if (group.owned)
      ZRT_MPI_CHECK(MPI_Comm_free(&group.comm));
  if (ctx->comm != MPI_COMM_NULL)
    ZRT_MPI_CHECK(MPI_Comm_free(&ctx->comm));
  closeWatchdogChannel(ctx);
  delete ctx;
}

int64_t ArgDesc::numel() const {
  int64_t n = 1;
  for (int32_t d = 0; d < rank && d < 4; ++d)
    n *= dims[d];
  return n;
}

int64_t shardNumel(int64_t numel, int64_t worldSize) {
  return (numel + worldSize - 1) / worldSize;
}

/// This rank's group of the ranks with the same `color`, ordered by rank.
static CommGroup splitGroup(zrt_context *ctx, int color) {
  CommGroup group;
  ZRT_MPI_CHECK(MPI_Comm_split(ctx->comm, color, ctx->rank, &group.comm));
  ZRT_MPI_CHECK(MPI_Comm_set_errhandler(group.comm, MPI_ERRORS_RETURN));
  ZRT_MPI_CHECK(MPI_Comm_rank(group.comm, &group.rank));
  ZRT_MPI_CHECK(MPI_Comm_size(group.comm, &group.size));
  group.owned = true;
  return group;
}

void formShardGroups(zrt_context *ctx) {
  if (!ctx->program.shardGroups || ctx->groups[ZRT_GROUP_SHARD].owned)
    return;
  int64_t g = shardCount(ctx);
  if (ctx->comm == MPI_COMM_NULL) {
    // A local context (tests) only pretends to be one rank of many: it has
    // no communicator to split, and its collectives need none.
    ctx->groups[ZRT_GROUP_SHARD] = {MPI_COMM_NULL, int(ctx->rank % g), int(g),
                                    false};
    ctx->groups[ZRT_GROUP_REPLICA] = {MPI_COMM_NULL, int(ctx->rank / g),
                                      int(ctx->worldSize / g), false};
    return;
  }
  // The main thread calls MPI: the communication thread must be idle.
  quiesceComm(ctx);
  ctx->groups[ZRT_GROUP_SHARD] = splitGroup(ctx, int(ctx->rank / g));
  ctx->groups[ZRT_GROUP_REPLICA] = splitGroup(ctx, int(ctx->rank % g));
}

const CommGroup &commGroup(const zrt_context *ctx, int32_t group,
                           const char *op) {
  if (group < 0 || group >= ZRT_NUM_GROUPS)
    fatal("%s: group %d is not a zrt_group (0 is ZRT_GROUP_WORLD, 1 "
          "ZRT_GROUP_SHARD, 2 ZRT_GROUP_REPLICA)",
          op, (int)group);
  return ctx->groups[group];
}

} // namespace zrt
