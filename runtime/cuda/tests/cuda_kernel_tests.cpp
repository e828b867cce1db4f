//===- cuda_kernel_tests.cpp - Every CUDA kernel against the CPU backend --===//
//
// The CPU kernels are checked against double-precision references by
// zrt-kernel-tests; here every kernel of the DeviceKernels table runs on a
// CPU context and on a CUDA context (both made without MPI, in one process)
// with the same inputs, and the results are compared: the checks of
// kernel_cases.h at their full set of shapes, on every attention path.
// zrt-cuda-kernels-emulated runs the same checks (but those of cuBLASLt and
// the copy engine) on the host emulator, at the small shapes.
//
// Tolerances: tests/comparison.h, shared with zrt-cuda-kernels-emulated.
//
// `--fault=bad-label` / `--fault=bad-id` make a kernel meet a label / token
// id out of range on the GPU: the next synchronisation must stop the process
// naming the kernel, the row and the value (as zrt-kernel-tests does for the
// CPU); `--fault=huge-alloc` checks that running out of GPU memory is
// reported like running out of host memory.
//
//===----------------------------------------------------------------------===//

#include "core/context.h"
#include "core/device.h"
#include "cuda/backend.h"
#include "cuda/tests/kernel_cases.h"
#include "tests/checker.h"
#include "tests/random_data.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace zrt;
using namespace zrt::cuda::test;

namespace {

zrt_context *gpuContext(int rank = 0, int worldSize = 1) {
  zrt_context *ctx = createLocalContext(rank, worldSize);
  cuda::attach(ctx, 0);
  return ctx;
}

int runFault(const std::string &fault) {
  zrt_context *gpu = gpuContext();
  ContextMemory memory(gpu);
  int status = runDataFault({gpu, memory}, fault);
  if (status < 0 && fault == "huge-alloc") {
    zrt_alloc(gpu, int64_t(1) << 60, ZRT_MEM_ACTIVATION);
    std::printf("fault %s did not stop the program\n", fault.c_str());
    status = 0;
  } else if (status < 0) {
    std::fprintf(stderr, "unknown fault '%s'\n", fault.c_str());
    status = 2;
  }
  destroyContext(gpu);
  return status;
}

} // namespace

int main(int argc, char **argv) {
  testRng.seed(1234);
  std::string why;
  if (cuda::visibleGpus(why) <= 0) {
    std::fprintf(stderr, "error: no CUDA GPU is visible (%s)\n", why.c_str());
    return 2;
  }
  if (argc == 2 && std::strncmp(argv[1], "--fault=", 8) == 0)
    return runFault(argv[1] + 8);
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--fault=bad-label|bad-id|huge-alloc]\n",
                 argv[0]);
    return 2;
  }
  std::printf("GPU: %s\n", cuda::gpuName(0).c_str());
  Checker check;
  // Rank 0 of 1, and ranks 1 and 2 of 3 for shard_slice.
  zrt_context *cpu[3] = {createLocalContext(), createLocalContext(1, 3),
                         createLocalContext(2, 3)};
  zrt_context *gpu[3] = {gpuContext(), gpuContext(1, 3), gpuContext(2, 3)};
  std::vector<ContextMemory> cpuMemory, gpuMemory;
  for (int i = 0; i < 3; ++i) {
    cpuMemory.emplace_back(cpu[i]);
    gpuMemory.emplace_back(gpu[i]);
  }
  auto harness = [&](int i) {
    return Harness{{cpu[i], cpuMemory[i]}, {gpu[i], gpuMemory[i]}, check};
  };
  Harness h = harness(0);
  Harness shards[2] = {harness(1), harness(2)};
  runKernelChecks(h, shards, Shapes::Full);
  // Nothing leaked: every test buffer was freed on both backends.
  check.expectTrue("every buffer freed (cpu and gpu ledgers at 0)",
                   cpu[0]->ledger.currentTotal == 0 &&
                       gpu[0]->ledger.currentTotal == 0);
  for (int i = 0; i < 3; ++i) {
    destroyContext(cpu[i]);
    destroyContext(gpu[i]);
  }
  return check.finish();
}
