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

/// DeviceRuntime::start for `ctx`: queues the collective of `call` on the
/// communication thread, which runs the catalogue's run<RuntimeName>
/// (zero/zrt_collectives.def) for its kind.
int64_t startCollective(zrt_context *ctx, const CollectiveCall &call);

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

  int64_t start(const CollectiveCall &call) override {
    return cpu::startCollective(ctx, call);
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
