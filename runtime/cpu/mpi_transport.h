//===- mpi_transport.h - The CPU backend's collectives over MPI -*- C++ -*-===//
//
// The collectives' transport of a context whose buffers are host memory
// (DeviceRuntime's start and wait methods): the CPU backend's, and the
// emulated CUDA device's (cuda/tests/emulation). abi/collectives.cpp has
// checked the arguments, counted the bytes and allocated the staging; a
// start queues the MPI work on the context's communication thread
// (comm_queue.h) and returns its handle, and the wait blocks until it has
// run. A context without MPI (one rank) copies instead, inline.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CPU_MPI_TRANSPORT_H
#define ZRT_CPU_MPI_TRANSPORT_H

#include "core/device.h"
#include "zero/zrt.h"

#include <cstdint>
#include <vector>

namespace zrt::cpu {

/// DeviceRuntime::startAllGather, startReduceScatter and startAllReduce:
/// the same arguments, for `ctx`.
int64_t startAllGather(zrt_context *ctx, int32_t dtype, const void *shard,
                       void *full, int64_t numel, int64_t shardNumel,
                       void *staging, int64_t countedBytes,
                       const CollectiveInfo &info);
int64_t startReduceScatter(zrt_context *ctx, int32_t dtype, const void *full,
                           void *shard, int64_t numel, int64_t shardNumel,
                           void *staging, int64_t countedBytes,
                           const CollectiveInfo &info);
int64_t startAllReduce(zrt_context *ctx, int32_t dtype, const void *x, void *y,
                       int64_t n, int64_t countedBytes,
                       const CollectiveInfo &info);

/// DeviceRuntime::wait: blocks until the collective of `handle` has run (a
/// wait that blocks is a "wait" slice on the trace).
void waitCollective(zrt_context *ctx, int64_t handle);

/// DeviceRuntime::unwaited.
std::vector<int64_t> unwaitedCollectives(const zrt_context *ctx);

/// The transport half of a DeviceRuntime whose memory is the host's: the
/// CPU backend's and the emulated CUDA device's runtimes derive from it and
/// add their memory, copies and synchronisation.
class MpiTransportRuntime : public DeviceRuntime {
public:
  explicit MpiTransportRuntime(zrt_context *ctx) : ctx(ctx) {}

  int64_t startAllGather(int32_t dtype, const void *shard, void *full,
                         int64_t numel, int64_t shardNumel, void *staging,
                         int64_t countedBytes,
                         const CollectiveInfo &info) override {
    return cpu::startAllGather(ctx, dtype, shard, full, numel, shardNumel,
                               staging, countedBytes, info);
  }
  int64_t startReduceScatter(int32_t dtype, const void *full, void *shard,
                             int64_t numel, int64_t shardNumel, void *staging,
                             int64_t countedBytes,
                             const CollectiveInfo &info) override {
    return cpu::startReduceScatter(ctx, dtype, full, shard, numel, shardNumel,
                                   staging, countedBytes, info);
  }
  int64_t startAllReduce(int32_t dtype, const void *x, void *y, int64_t n,
                         int64_t countedBytes,
                         const CollectiveInfo &info) override {
    return cpu::startAllReduce(ctx, dtype, x, y, n, countedBytes, info);
  }
  void wait(int64_t handle) override { waitCollective(ctx, handle); }
  std::vector<int64_t> unwaited() const override {
    return unwaitedCollectives(ctx);
  }

protected:
  zrt_context *ctx;
};

} // namespace zrt::cpu

#endif // ZRT_CPU_MPI_TRANSPORT_H
