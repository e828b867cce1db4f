//===- nccl_collectives.cpp - The collectives of a CUDA context over NCCL -===//
//
// abi/collectives.cpp checks every collective's arguments, counts its bytes
// and allocates its padded staging the same way on every backend (so the
// ledger is the same); on a GPU it then calls start() here, which enqueues
// the transfer on the communication stream by the function of its kind
// (enqueue<RuntimeName>, one per line of zero/zrt_collectives.def):
//
//   compute: ... kernels ... [record inputsReady]        [wait done] ...
//   comm:                     [wait inputsReady] NCCL call [record done]
//
// The padded semantics are the CPU backend's: an all-gather's output holds
// only numel elements, so a padded gather lands in the W*S-element staging
// buffer and its first numel elements are copied out; a padded
// reduce-scatter reduces a zero-padded copy of its input in staging. Both
// copies run on the communication stream, in order with the NCCL call.
// bf16 sums are ncclBfloat16 with ncclSum, which adds pairs in float32 and
// rounds, as the CPU backend's MPI_Op does.
//
// The world communicator spans the context's ranks and is made over MPI
// (rank 0's unique id broadcast). A program with shard groups
// (zrt_declare_shard_groups) also gets one communicator per group this rank
// is in, split from the world's (ncclCommSplit; before NCCL 2.18, each
// group's own unique id broadcast over its MPI communicator): the shard
// group (consecutive ranks, so within a node first) and the replica group.
// Without shard groups the shard group is the world and the replica group
// this rank alone. A group of one rank, and a context without MPI, has no
// communicator: its collectives are copies on the communication stream, so
// the event machinery is exercised by single-process tests as well.
//
// NCCL calls block nothing on the host, so a collective that never completes
// (a rank that died, ranks that disagree on the order) would hang the job in
// the next synchronisation: the watchdog there gives up after
// ZRT_NCCL_TIMEOUT_S, aborts the communicator, names the collective and asks
// the other ranks where they are (core/watchdog.h).
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/trace.h"
#include "core/watchdog.h"
#include "cuda/cuda_check.h"
#include "cuda/device_context.h"

#include <algorithm>
#include <cstring>

namespace zrt::cuda {

/// Reports a failed NCCL call: the collective (or setup step) it served,
/// the call, NCCL's error string and its last message; fatal() prefixes the
/// rank and stops the job.
[[noreturn]] static void ncclFailure(ncclResult_t result, const char *what,
                                     const char *call, const char *file,
                                     int line) {
  const char *tail = std::strstr(file, "runtime/");
  fatal("NCCL %s failed at %s:%d: %s: %s (%s)", what, tail ? tail : file, line,
        call, ncclGetErrorString(result), ncclGetLastError(nullptr));
}

} // namespace zrt::cuda

/// Checks one NCCL call made for `what` ("all_reduce", "setup", ...).
#define ZRT_NCCL_CHECK(what, call)                                             \
  do {                                                                         \
    ncclResult_t zrtNcclStatus_ = (call);                                      \
    if (zrtNcclStatus_ != ncclSuccess)                                         \
      ::zrt::cuda::ncclFailure(zrtNcclStatus_, what, #call, __FILE__,          \
                               __LINE__);                                      \
  } while (0)

namespace zrt::cuda {

static ncclDataType_t ncclType(int32_t dtype) {
  return dtype == ZRT_BF16 ? ncclBfloat16 : ncclFloat32;
}

/// Bytes of one element (the dtype was checked by the caller).
static size_t elementSize(int32_t dtype) { return dtype == ZRT_BF16 ? 2 : 4; }

/// NCCL has no 128-bit integer sum, so ZRT_EXACT (the exact accumulators of
/// --deterministic programs) is refused by every collective here; such a
/// program runs on the CPU backend (zrt_run refuses it on a device).
static void refuseExact(const char *collective, int32_t dtype) {
  if (dtype == ZRT_EXACT)
    fatal("%s: dtype ZRT_EXACT (the exact sums of --deterministic programs) "
          "has no NCCL reduction; --deterministic programs run on the CPU "
          "backend (--device=cpu)",
          collective);
}

//===--- The communicator -------------------------------------------------===//

/// A communicator over the ranks of `group` (an MPI communicator), rank 0's
/// unique id broadcast over it.
static ncclComm_t initOver(const CommGroup &group) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (group.rank == 0)
    ZRT_NCCL_CHECK("setup", ncclGetUniqueId(&id));
  ZRT_MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, group.comm));
  ncclComm_t comm = nullptr;
  ZRT_NCCL_CHECK("setup", ncclCommInitRank(&comm, group.size, id, group.rank));
  return comm;
}

/// This rank's communicator of `group`, formed like its MPI communicator
/// (formShardGroups): the world's ranks of the same color, by rank. Every
/// rank of the world calls it, in the same order of groups.
static ncclComm_t splitFrom(ncclComm_t world, const zrt_context *ctx,
                            int32_t group) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
  int64_t g = shardCount(ctx);
  int color = int(group == ZRT_GROUP_SHARD ? ctx->rank / g : ctx->rank % g);
  ncclComm_t comm = nullptr;
  ZRT_NCCL_CHECK("setup",
                 ncclCommSplit(world, color, ctx->rank, &comm, nullptr));
  return comm;
#else
  (void)world;
  return initOver(ctx->groups[group]);
#endif
}

void CudaRuntime::initNccl() {
  if (ctx->comm == MPI_COMM_NULL)
    return;
  // The main thread calls MPI here, between steps: the comm queue (used by
  // the CPU backend only) must be idle, as for every other such call.
  quiesceComm(ctx);
  nccl = initOver(ctx->groups[ZRT_GROUP_WORLD]);
  groupComms[ZRT_GROUP_WORLD] = nccl;
  if (!ctx->program.shardGroups) {
    groupComms[ZRT_GROUP_SHARD] = nccl; // the world's
    return;                             // REPLICA: this rank alone
  }
  for (int32_t group : {ZRT_GROUP_SHARD, ZRT_GROUP_REPLICA})
    groupComms[group] = splitFrom(nccl, ctx, group);
}

/// Each communicator once: the shard group's may be the world's.
std::vector<ncclComm_t> CudaRuntime::communicators() const {
  std::vector<ncclComm_t> comms;
  for (ncclComm_t comm : groupComms)
    if (comm && std::find(comms.begin(), comms.end(), comm) == comms.end())
      comms.push_back(comm);
  return comms;
}

void CudaRuntime::abortNccl() {
  for (ncclComm_t comm : communicators())
    ncclCommAbort(comm);
  for (ncclComm_t &comm : groupComms)
    comm = nullptr;
  nccl = nullptr;
}

void CudaRuntime::destroyNccl() {
  // The groups' communicators before the world's they were split from.
  std::vector<ncclComm_t> comms = communicators();
  for (auto it = comms.rbegin(); it != comms.rend(); ++it) {
    ncclComm_t comm = *it;
    ZRT_NCCL_CHECK("teardown", ncclCommFinalize(comm));
    ZRT_NCCL_CHECK("teardown", ncclCommDestroy(comm));
  }
  for (ncclComm_t &comm : groupComms)
    comm = nullptr;
  nccl = nullptr;
}

void CudaRuntime::checkProgress(double elapsedSeconds) {
  for (ncclComm_t comm : communicators()) {
    ncclResult_t async = ncclSuccess;
    ZRT_NCCL_CHECK("error query", ncclCommGetAsyncError(comm, &async));
    if (async != ncclSuccess && async != ncclInProgress) {
      std::string last = ncclGetLastError(comm);
      abortNccl();
      fatal("NCCL failed while running the step's collectives: %s (%s)",
            ncclGetErrorString(async), last.c_str());
    }
  }
  if (elapsedSeconds <= timeoutSeconds)
    return;
  // The first collective in start order that has not completed is the one
  // the others queue behind.
  const InFlight *stuck = nullptr;
  for (const InFlight &collective : inFlight)
    if (cudaEventQuery(collective.done) == cudaErrorNotReady) {
      stuck = &collective;
      break;
    }
  abortNccl();
  if (!stuck)
    fatal("the GPU's work did not complete within %g s (ZRT_NCCL_TIMEOUT_S)",
          timeoutSeconds);
  stopStalledJob(ctx, "NCCL", &stuck->info, timeoutSeconds, elapsedSeconds,
                 "ZRT_NCCL_TIMEOUT_S");
}

//===--- Starting and waiting ---------------------------------------------===//

template <typename Launch>
int64_t CudaRuntime::startCollective(const CollectiveInfo &info,
                                     int64_t countedBytes, Launch launch) {
  // With --trace the slice on the comm track spans the launch on the host
  // (the GPU runs it asynchronously).
  Tracer *tracer = ctx->tracer.get();
  int64_t begin = tracer ? tracer->now() : 0;
  // The inputs were produced by kernels already queued on the compute
  // stream (and the staging zeroed there): the transfer starts after them.
  // Re-recording inputsReady later does not affect this wait, which takes
  // the event's state at the time of the call.
  ZRT_CUDA_CHECK(cudaEventRecord(inputsReady, compute));
  ZRT_CUDA_CHECK(cudaStreamWaitEvent(comm, inputsReady, 0));
  launch();
  cudaEvent_t done = takeEvent(spareEvents);
  ZRT_CUDA_CHECK(cudaEventRecord(done, comm));
  int64_t handle = nextHandle++;
  inFlight.push_back({handle, info, countedBytes, done, /*waited=*/false});
  notWaited.insert(handle);
  if (tracer)
    tracer->record(
        Tracer::Comm,
        commLabel(collectiveName(info.kind), info.tensorBytes, info.label),
        "collective", begin, tracer->now(), countedBytes, info.group);
  return handle;
}

int64_t CudaRuntime::start(const CollectiveCall &call) {
  refuseExact(collectiveSpec(CollectiveKind(call.info.kind)).entryPoint,
              call.dtype);
  ncclComm_t over = groupComms[call.info.group];
  return startCollective(call.info, call.countedBytes, [&] {
    switch (call.info.kind) {
#define ZRT_COLLECTIVE(KIND, name, RuntimeName, ...)                           \
  case RuntimeName:                                                            \
    return enqueue##RuntimeName(call, over);
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
    }
    fatal("a collective of unknown kind %d", int(call.info.kind));
  });
}

void CudaRuntime::enqueueAllGather(const CollectiveCall &call,
                                   ncclComm_t over) {
  const void *shard = call.input;
  void *full = call.output;
  int64_t numel = call.numel;
  size_t size = elementSize(call.dtype);
  if (!over) {
    // One rank: the gathered tensor is the shard (its padding dropped).
    if (numel > 0 && full != shard)
      ZRT_CUDA_CHECK(cudaMemcpyAsync(full, shard, numel * size,
                                     cudaMemcpyDeviceToDevice, comm));
    return;
  }
  void *receive = call.staging ? call.staging : full;
  if (call.shardNumel > 0)
    ZRT_NCCL_CHECK("all_gather",
                   ncclAllGather(shard, receive, (size_t)call.shardNumel,
                                 ncclType(call.dtype), over, comm));
  if (call.staging && numel > 0)
    ZRT_CUDA_CHECK(cudaMemcpyAsync(full, call.staging, numel * size,
                                   cudaMemcpyDeviceToDevice, comm));
}

void CudaRuntime::enqueueReduceScatter(const CollectiveCall &call,
                                       ncclComm_t over) {
  const void *full = call.input;
  void *shard = call.output;
  int64_t numel = call.numel, shardNumel = call.shardNumel;
  size_t size = elementSize(call.dtype);
  if (!over) {
    // One rank: the shard is the tensor, zero padded.
    if (numel > 0 && shard != full)
      ZRT_CUDA_CHECK(cudaMemcpyAsync(shard, full, numel * size,
                                     cudaMemcpyDeviceToDevice, comm));
    if (shardNumel > numel)
      ZRT_CUDA_CHECK(cudaMemsetAsync((char *)shard + numel * size, 0,
                                     (shardNumel - numel) * size, comm));
    return;
  }
  // NCCL reads W*S elements; a shorter tensor is reduced from a copy in
  // the staging buffer, whose padding zrt_alloc zeroed.
  const void *send = full;
  if (call.staging) {
    if (numel > 0)
      ZRT_CUDA_CHECK(cudaMemcpyAsync(call.staging, full, numel * size,
                                     cudaMemcpyDeviceToDevice, comm));
    send = call.staging;
  }
  if (shardNumel > 0)
    ZRT_NCCL_CHECK("reduce_scatter",
                   ncclReduceScatter(send, shard, (size_t)shardNumel,
                                     ncclType(call.dtype), ncclSum, over,
                                     comm));
}

void CudaRuntime::enqueueAllReduce(const CollectiveCall &call,
                                   ncclComm_t over) {
  const void *x = call.input;
  void *y = call.output;
  int64_t n = call.numel;
  size_t size = elementSize(call.dtype);
  if (!over) {
    if (n > 0 && x != y)
      ZRT_CUDA_CHECK(
          cudaMemcpyAsync(y, x, n * size, cudaMemcpyDeviceToDevice, comm));
    return;
  }
  // In place (x == y) is NCCL's own in-place form.
  if (n > 0)
    ZRT_NCCL_CHECK("all_reduce",
                   ncclAllReduce(x, y, (size_t)n, ncclType(call.dtype), ncclSum,
                                 over, comm));
}

void CudaRuntime::wait(int64_t handle) {
  // The CPU backend's messages (core/comm_queue.cpp), so misuse reads alike.
  if (handle <= 0 || handle >= nextHandle)
    fatal("zrt_wait: unknown handle %lld (handles so far: 1 to %lld)",
          (long long)handle, (long long)nextHandle - 1);
  if (!notWaited.erase(handle))
    fatal("zrt_wait: handle %lld was already waited for; each handle is "
          "waited for exactly once",
          (long long)handle);
  for (InFlight &collective : inFlight)
    if (collective.handle == handle) {
      // The kernels queued from now on (and the frees: the staging, the
      // buffers of the collective) run after the transfer; the host goes on.
      ZRT_CUDA_CHECK(cudaStreamWaitEvent(compute, collective.done, 0));
      collective.waited = true;
      return;
    }
  fatal("zrt_wait: handle %lld is not in flight", (long long)handle);
}

std::vector<int64_t> CudaRuntime::unwaited() const {
  std::vector<int64_t> handles;
  for (const InFlight &collective : inFlight)
    if (!collective.waited)
      handles.push_back(collective.handle);
  return handles;
}

} // namespace zrt::cuda
