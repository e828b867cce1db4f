//===- cuda_collective_tests.cpp - NCCL collectives against known values --===//
//
// The checks of zrt-collective-tests (runtime/tests/collective_cases.h,
// shared with it) on contexts attached to a GPU the way the driver attaches
// them (selectDevice with --device=cuda: one GPU per rank by local rank,
// NCCL bootstrapped over MPI), with every tensor in device memory. Run under
// mpirun with one GPU per rank; `mpirun -np 1` already goes through NCCL.
//
// On top of the CPU checks, the stream ordering the CUDA backend promises:
// a collective started right after a kernel sees that kernel's output (the
// start waits for the compute stream), and a kernel issued right after a
// wait sees the collective's result (the wait orders the compute stream),
// with tensors large enough (16M elements) that a missing dependency would
// show. `--fault=double-wait` and `--fault=unknown-handle` misuse zrt_wait
// and must stop the job with the CPU backend's messages. `--groups=G` runs
// the group cases of zrt-collective-tests (shard groups of G ranks, 0:
// none) over the NCCL communicators of each group.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"
#include "core/device.h"
#include "tests/checker.h"
#include "tests/collective_cases.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace zrt;

namespace {

/// A context on this rank's GPU, as the driver makes it (shard groups
/// formed first: the NCCL communicators are made from them).
zrt_context *gpuContext(int64_t shardGroupSize = 0) {
  zrt_context *ctx = createContext(MPI_COMM_WORLD);
  prepareShardGroups(ctx, shardGroupSize);
  std::string banner;
  std::string error = selectDevice(ctx, "cuda", banner);
  if (!error.empty())
    fatal("%s", error.c_str());
  return ctx;
}

/// Tensors in the context's device memory, moved through the runtime's own
/// copies; reads wait for everything queued first.
class DeviceBuffers final : public BufferAdapter {
public:
  zrt_context *makeContext(int64_t shardGroupSize) const override {
    return gpuContext(shardGroupSize);
  }
  void *allocate(zrt_context *ctx, int64_t bytes) const override {
    return zrt_alloc(ctx, bytes, ZRT_MEM_ACTIVATION);
  }
  void release(zrt_context *ctx, void *ptr) const override {
    zrt_free(ctx, ptr);
  }
  void upload(zrt_context *ctx, void *dst, const void *src,
              int64_t bytes) const override {
    copyToDevice(ctx, dst, src, bytes);
  }
  void download(zrt_context *ctx, void *dst, const void *src,
                int64_t bytes) const override {
    synchronizeDevice(ctx);
    copyToHost(ctx, dst, src, bytes);
  }
  // The CUDA backend counts as the CPU one does; the name says so.
  const char *bytesCheckName() const override {
    return "counters (bytes, as the CPU backend counts)";
  }
};

/// Stream ordering across kernels and collectives, on 16M elements.
void testOrdering(Checker &check, const DeviceBuffers &device) {
  zrt_context *ctx = device.makeContext(/*shardGroupSize=*/0);
  const int W = ctx->worldSize;
  const int64_t n = 16 << 20;
  bool startSeesKernel = true, kernelSeesWait = true;
  {
    BufferTensor x(device, ctx, ZRT_F32, n), y(device, ctx, ZRT_F32, n),
        z(device, ctx, ZRT_F32, n);
    for (int round = 0; round < 3; ++round) {
      float value = ctx->rank + 1.0f + round;
      // A kernel writes x; the all-reduce started at once must read that.
      zrt_fill(ctx, ZRT_F32, x.data(), n, value);
      int64_t handle = zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, ZRT_F32,
                                            x.data(), y.data(), n, "test");
      zrt_wait(ctx, handle);
      // A kernel right after the wait must read the sum.
      zrt_add(ctx, ZRT_F32, y.data(), y.data(), z.data(), n);
      float sum = W * (W + 1) / 2.0f + W * (float)round;
      std::vector<float> ys = y.values(), zs = z.values();
      for (int64_t i = 0; i < n; i += 4099) {
        startSeesKernel &= ys[i] == sum;
        kernelSeesWait &= zs[i] == 2 * sum;
      }
      startSeesKernel &= ys[n - 1] == sum;
      kernelSeesWait &= zs[n - 1] == 2 * sum;
    }
  }
  destroyContext(ctx);
  check.expectTrue("ordering: a collective started after a kernel reads its "
                   "output (16M floats, 3 rounds)",
                   startSeesKernel);
  check.expectTrue("ordering: a kernel issued after a wait reads the "
                   "collective's result (16M floats, 3 rounds)",
                   kernelSeesWait);
}

int runFault(const DeviceBuffers &device, const std::string &fault) {
  zrt_context *ctx = device.makeContext(/*shardGroupSize=*/0);
  {
    BufferTensor one(device, ctx, ZRT_F32, std::vector<float>{1.0f});
    if (fault == "double-wait") {
      int64_t handle = zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, ZRT_F32,
                                            one.data(), one.data(), 1, "test");
      zrt_wait(ctx, handle);
      zrt_wait(ctx, handle);
    } else if (fault == "unknown-handle") {
      zrt_all_reduce(ctx, ZRT_GROUP_WORLD, ZRT_F32, one.data(), one.data(), 1,
                     "test");
      zrt_wait(ctx, 42);
    } else {
      std::fprintf(stderr, "unknown fault '%s'\n", fault.c_str());
      return 2;
    }
  }
  std::printf("fault %s did not stop the job\n", fault.c_str());
  destroyContext(ctx);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  initMpi(&argc, &argv);
  const DeviceBuffers device{};
  int status;
  if (argc == 2 && std::strncmp(argv[1], "--fault=", 8) == 0) {
    status = runFault(device, argv[1] + 8);
  } else if (argc == 2 && std::strncmp(argv[1], "--groups=", 9) == 0) {
    // The group cases over NCCL communicators split per group.
    Checker check(MPI_COMM_WORLD);
    runGroupCases(check, device, std::atoll(argv[1] + 9));
    status = check.finish();
  } else {
    Checker check(MPI_COMM_WORLD);
    runCollectiveCases(check, device);
    testOrdering(check, device);
    status = check.finish();
  }
  ZRT_MPI_CHECK(MPI_Finalize());
  return status;
}
