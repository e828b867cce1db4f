//===- collectives.cpp - The exported zrt_* collectives -------------------===//
//
// Both entry points of every collective of the catalogue
// (zero/zrt_collectives.def), defined from its line. Every collective's
// arguments are checked, its bytes counted and its padded staging allocated
// here, by its shape and alike for every backend, so the ledger is the same
// on all of them; then the context's transport (DeviceRuntime::start)
// starts it: MPI on the CPU's communication thread (cpu/mpi_transport.h),
// NCCL on a GPU's communication stream.
//
// Bytes moved are counted by zrt.h's zrt_traffic_elements, the formula the
// compiler's --report predicts with: the ZeRO paper's data volume per rank
// (an all-gather or a reduce-scatter the whole padded tensor, W*S elements as
// MPI moves; an all-reduce twice its buffer). The count is by formula, also
// at world size 1 where MPI moves nothing, and by the element size of the
// dtype (bf16 tensors travel as 2-byte elements).
//
// Every collective runs over one of the context's groups (zrt_group: the
// world, this rank's shard group or its replica group, core/context.h); W
// is that group's size, and its bytes count per kind and per group.
//
// Each collective is checked and counted when it starts, on the calling
// thread, so a bad call is reported where it was made. The blocking forms
// are a start and a wait, so that collectives of both forms keep one order
// on every rank.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/schedule_check.h"

#include <climits>

using namespace zrt;

namespace {

void count(zrt_context *ctx, CollectiveKind kind, int32_t group,
           int64_t elements, int64_t size) {
  CollectiveCounters &c = ctx->collectives;
  c.calls[kind] += 1;
  c.bytes[kind] += elements * size;
  c.groupCalls[group] += 1;
  c.groupBytes[group] += elements * size;
}

/// MPI counts are int: refuse, by name, what would silently wrap.
int mpiCount(const char *op, int64_t elements) {
  if (elements < 0 || elements > INT_MAX)
    fatal("%s: %lld elements do not fit in an MPI count", op,
          (long long)elements);
  return (int)elements;
}

/// A group without a communicator is only valid for a single rank, where a
/// collective is a copy.
void checkLocalSpan(const CommGroup &group, const char *op) {
  if (group.comm == MPI_COMM_NULL && group.size != 1)
    fatal("%s: a context without MPI cannot span %d ranks", op, group.size);
}

void checkShards(const char *op, int64_t W, int64_t numel, int64_t shardNumel) {
  if (numel < 0 || shardNumel < 0 || shardNumel * W < numel)
    fatal("%s: %lld shards of %lld elements cannot hold %lld", op, (long long)W,
          (long long)shardNumel, (long long)numel);
}

/// A padded collective's staging copy is allocated here, on the thread that
/// starts it, and freed by its wait: its ledger charge spans exactly start to
/// wait, whatever the communication thread's timing, so the peaks the
/// compiler's --report predicts are the ones measured.
void *stagingFor(zrt_context *ctx, const CommGroup &group, int64_t numel,
                 int64_t shardNumel, int64_t elementSize) {
  int64_t padded = group.size * shardNumel;
  if (group.comm == MPI_COMM_NULL || numel >= padded)
    return nullptr;
  return zrt_alloc(ctx, padded * elementSize, ZRT_MEM_COMM);
}

/// What the collective is and where it stands in the step, for the
/// watchdog's message (core/watchdog.h): the driver's position, numbered.
CollectiveInfo infoFor(zrt_context *ctx, CollectiveKind kind, int32_t group,
                       int64_t tensorBytes, const char *label) {
  CollectiveInfo info;
  info.kind = kind;
  info.group = group;
  info.tensorBytes = tensorBytes;
  info.label = label ? label : "";
  info.step = ctx->position.step;
  info.validation = ctx->position.validation;
  info.sequence = ++ctx->position.collectives;
  return info;
}

/// --calibrate's account of one collective start or wait (ctx->timing).
class TimedCall {
public:
  TimedCall(zrt_context *ctx, bool isStart)
      : ctx(ctx->timing.on ? ctx : nullptr), isStart(isStart),
        begin(this->ctx ? ScheduleCheck::nowNs() : 0) {}
  ~TimedCall() {
    if (!ctx)
      return;
    int64_t ns = ScheduleCheck::nowNs() - begin;
    if (isStart) {
      ++ctx->timing.starts;
      ctx->timing.startNs += ns;
    } else {
      ctx->timing.waitNs += ns;
    }
  }

private:
  zrt_context *ctx;
  bool isStart;
  int64_t begin;
};

/// The start of every collective: the checks and counts they share, the
/// staging of a padded one, then the context's transport. The arguments
/// are the start arguments of the kind's catalogue line.
int64_t startCollective(CollectiveKind kind, zrt_context *ctx, int32_t group,
                        int32_t dtype, const void *input, void *output,
                        int64_t numel, int64_t shardNumel, const char *label) {
  TimedCall timed(ctx, /*isStart=*/true);
  const CollectiveSpec &spec = collectiveSpec(kind);
  const char *op = spec.entryPoint;
  const CommGroup &over = commGroup(ctx, group, op);
  int64_t size = dtypeSize(op, dtype), W = over.size;
  if (spec.padded()) {
    checkShards(op, W, numel, shardNumel);
    mpiCount(op, shardNumel);
  }
  // What moves on the wire: the padded tensor, or the one buffer.
  int64_t tensorElements = spec.padded() ? W * shardNumel : numel;
  mpiCount(op, tensorElements);
  checkLocalSpan(over, op);
  int64_t traffic =
      zrt_traffic_elements((zrt_collective)kind, numel, shardNumel, W);
  count(ctx, kind, group, traffic, size);
  CollectiveCall call;
  call.dtype = dtype;
  call.input = input;
  call.output = output;
  call.numel = numel;
  call.shardNumel = shardNumel;
  if (spec.padded())
    call.staging = stagingFor(ctx, over, numel, shardNumel, size);
  call.countedBytes = traffic * size;
  call.info = infoFor(ctx, kind, group, tensorElements * size, label);
  int64_t issued = ScheduleCheck::nowNs();
  int64_t handle = ctx->runtime->start(call);
  if (ctx->checkSchedule)
    ctx->schedule->started(call.info, handle, issued);
  if (call.staging)
    ctx->stagingByHandle[handle] = call.staging;
  return handle;
}

/// startCollective for one kind, called with a catalogue line's start
/// arguments.
struct Start {
  CollectiveKind kind;
  int64_t operator()(zrt_context *ctx, int32_t group, int32_t dtype,
                     const void *input, void *output, int64_t numel,
                     int64_t shardNumel, const char *label) const {
    return startCollective(kind, ctx, group, dtype, input, output, numel,
                           shardNumel, label);
  }
};

} // namespace

extern "C" void zrt_wait(zrt_context *ctx, int64_t handle) {
  TimedCall timed(ctx, /*isStart=*/false);
  int64_t begin = ctx->checkSchedule ? ScheduleCheck::nowNs() : 0;
  ctx->runtime->wait(handle);
  if (ctx->checkSchedule)
    ctx->schedule->waited(handle, ScheduleCheck::nowNs() - begin);
  auto staging = ctx->stagingByHandle.find(handle);
  if (staging != ctx->stagingByHandle.end()) {
    zrt_free(ctx, staging->second);
    ctx->stagingByHandle.erase(staging);
  }
}

// Both entry points of every collective of the catalogue: the start, and
// the blocking form, a start and a wait.
#define ZRT_COLLECTIVE(KIND, name, RuntimeName, shape, elements, traffic,      \
                       params, args)                                           \
  extern "C" int64_t zrt_##name##_start params {                               \
    return Start{RuntimeName} args;                                            \
  }                                                                            \
  extern "C" void zrt_##name params { zrt_wait(ctx, Start{RuntimeName} args); }
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
