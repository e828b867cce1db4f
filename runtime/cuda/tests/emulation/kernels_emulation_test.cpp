//===- kernels_emulation_test.cpp - CUDA kernels vs CPU, no GPU -----------===//
//
// zrt-cuda-kernels-emulated: the checks zrt-cuda-kernel-tests runs on a GPU
// (cuda/tests/kernel_cases.h), at their small shapes, on a context attached
// to the emulated device (emulated_device.h): every hand-written kernel of
// the CUDA backend (cuda/*_kernels.cuh, compiled as C++ over the host
// emulator of cuda_emulation.h and launched as the .cu files launch them)
// against the CPU backend's kernel on a CPU context, through the same
// zrt_* entry points. It needs only a host compiler, so the kernels'
// indexing, reductions, masks, vector paths and tails are checked on
// machines without a GPU (lit: test/runtime/cuda-kernels-emulated.test).
// Whether they are fast, and whether the hardware agrees with the emulator,
// only a GPU run shows. Not here: matmul and matmul_bias (cuBLASLt), the
// tensor-core attention (zrt-cuda-attention-emulated), copy / shard_slice /
// slice_cols (copy-engine calls, no kernel of ours) and the collectives
// (NCCL).
//
// Tensors live in exact-sized host blocks (ExactHostMemory), so that under
// AddressSanitizer (scripts/sanitize.sh) a kernel touching one element past
// a tensor is reported.
//
// --fault=shfl-xor breaks the emulated __shfl_xor_sync (lane mask 16
// returns the lane's own value, so the first step of every xor butterfly
// adds a lane's partial to itself instead of to its partner's): every
// kernel that reduces over a warp (norms, softmax cross-entropy,
// sum_squares, attention) must then fail, while the elementwise ones still
// pass. --fault=bad-label / bad-id: as zrt-cuda-kernel-tests, a data error
// the next synchronisation must report. --full runs the GPU's full set of
// shapes, GPT-2's included (minutes). --workers=N sets the OS threads
// (default: the hardware's, at most 4).
//
//===----------------------------------------------------------------------===//

#include "emulated_device.h"
#include "emulated_kernels.h"

#include "core/context.h"
#include "cuda/tests/kernel_cases.h"
#include "tests/checker.h"
#include "tests/random_data.h"
#include "zero/zrt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace zrt;
using namespace zrt::cuda::test;
namespace emulated = zrt::cuda::emulated;

namespace {

/// What only the emulator can look at: the error record a kernel leaves for
/// a label or token id out of range, and what it does with that row.
void testErrorRecords(Checker &check) {
  ExactHostMemory memory;
  {
    Buffers buf(memory);
    cuda::DeviceError errors{};
    void *logits = buf.floats(ZRT_F32, randomVector(3 * 4));
    float *loss = static_cast<float *>(buf.nans(ZRT_F32, 1));
    emulated::softmaxXent(ZRT_F32, logits, buf.ints({0, 3, 4}), loss, 3, 4,
                          3.0f, &errors);
    check.expectTrue("softmax_xent records label 4 of row 2 out of range and "
                     "skips the row",
                     errors.code == cuda::kLabelOutOfRange && errors.row == 2 &&
                         errors.value == 4 && errors.bound == 4 &&
                         std::isfinite(buf.read(loss)[0]));
  }
  {
    Buffers buf(memory);
    cuda::DeviceError errors{};
    void *table = buf.floats(ZRT_BF16, std::vector<float>(5 * 2, 1.0f));
    void *out = buf.nans(ZRT_BF16, 3 * 2);
    emulated::embedding(ZRT_BF16, buf.ints({0, 4, 5}), table, out, 3, 5, 2,
                        &errors);
    std::vector<float> got = buf.read(out);
    check.expectTrue("embedding records id 5 of row 2 out of range and "
                     "leaves its row alone",
                     errors.code == cuda::kTokenOutOfRange && errors.row == 2 &&
                         errors.value == 5 && errors.bound == 5 &&
                         got[3] == 1.0f && std::isnan(got[4]));
  }
}

/// The emulator has the SIMT kernels only; the tensor-core ones have a test
/// of their own (zrt-cuda-attention-emulated).
AttentionPaths simtOnly() {
  return {[](int32_t, int64_t) { return std::vector<std::string>{"SIMT"}; },
          [](const std::string &) {}};
}

} // namespace

int main(int argc, char **argv) {
  int workers =
      (int)std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  std::string fault;
  Shapes shapes = Shapes::Small;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--full")
      shapes = Shapes::Full;
    else if (arg.rfind("--fault=", 0) == 0)
      fault = arg.substr(8);
    else if (arg.rfind("--workers=", 0) == 0)
      workers = std::max(1, std::atoi(arg.c_str() + 10));
    else {
      std::fprintf(stderr,
                   "usage: %s [--full] [--fault=shfl-xor|bad-label|bad-id] "
                   "[--workers=N]\n",
                   argv[0]);
      return 2;
    }
  }
  emulated::setWorkers(workers);
  testRng.seed(1234);
  ExactHostMemory memory;
  zrt_context *cpu = createLocalContext(), *device = createLocalContext();
  emulated::attach(device);
  if (fault == "bad-label" || fault == "bad-id") {
    int status = runDataFault({device, memory}, fault);
    destroyContext(device);
    destroyContext(cpu);
    return status;
  }
  if (!fault.empty() && fault != "shfl-xor") {
    std::fprintf(stderr, "unknown --fault=%s\n", fault.c_str());
    return 2;
  }
  emulated::setFault(fault);
  std::printf("emulated CUDA kernels against the CPU backend%s%s\n",
              fault.empty() ? "" : ", broken on purpose: ", fault.c_str());
  const auto start = std::chrono::steady_clock::now();
  Checker check;
  Harness h{{cpu, memory}, {device, memory}, check};
  testElementwise(h, shapes);
  testBias(h, shapes);
  testCastFill(h, shapes);
  testSoftmaxXent(h, shapes);
  testEmbedding(h, shapes);
  testNorms(h, shapes);
  testRope(h, shapes);
  testAttention(h, shapes, simtOnly());
  testOptimizer(h, shapes);
  testErrorRecords(check);
  destroyContext(device);
  destroyContext(cpu);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("(%.1f s)\n", seconds);
  return check.finish();
}
