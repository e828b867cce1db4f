//===- kernels_emulation_test.cpp - CUDA kernels vs CPU, no GPU -----------===//
//
// zrt-cuda-kernels-emulated: the checks zrt-cuda-kernel-tests runs on a GPU
// (cuda/tests/kernel_cases.h), at their small shapes, on contexts attached
// to the emulated device (emulated_device.h): every kernel family of the
// CUDA backend, the .cu files' launch code included, compiled as C++ over
// the host emulator of CUDA, against the CPU backend's kernel on a CPU
// context, through the same zrt_* entry points. It needs only a host
// compiler, so the kernels' indexing, reductions, masks, vector paths and
// tails, and the launches' grids, scratch and copies, are checked on
// machines without a GPU (lit: test/runtime/cuda-kernels-emulated.test).
// Whether they are fast, and whether the hardware agrees with the emulator,
// only a GPU run shows. The GEMMs run matmul.cu's calls on an emulation of
// cuBLASLt's documented semantics; not here: the collectives (NCCL).
//
// Tensors live in exact-sized host blocks (ExactHostMemory), as does the
// kernels' scratch (cudaMallocAsync), so that under AddressSanitizer
// (scripts/sanitize.sh) a kernel touching one element past either is
// reported.
//
// --fault=shfl-xor breaks the emulated __shfl_xor_sync (lane mask 16
// returns the lane's own value, so the first step of every xor butterfly
// adds a lane's partial to itself instead of to its partner's): every
// kernel that reduces over a warp (norms, softmax cross-entropy,
// sum_squares, attention) must then fail, while the elementwise ones still
// pass. --fault=mma-b-layout reads the tensor cores' B fragment wrongly:
// the tensor-core attention must fail, the SIMT one pass.
// --fault=cublaslt-mask makes the emulated cuBLASLt offer no algorithm under
// matmul.cu's reduction-scheme mask: matmul.cu must warn once and fall back
// to any scheme, and every check still pass. --fault=bad-label
// / bad-id: as zrt-cuda-kernel-tests, a data error the next synchronisation
// must report. --full runs the GPU's full set of shapes, GPT-2's included
// (minutes). --workers=N sets the OS threads (default: the hardware's, at
// most 4).
//
//===----------------------------------------------------------------------===//

#include "emulated_device.h"

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
/// a label or token id out of range (taken before a synchronisation would
/// stop on it), and what the kernel does with that row.
void testErrorRecords(const Side &device, Checker &check) {
  {
    Buffers buf(device.memory);
    void *logits = buf.floats(ZRT_F32, randomVector(3 * 4));
    float *loss = static_cast<float *>(buf.nans(ZRT_F32, 1));
    zrt_softmax_xent(device.ctx, ZRT_F32, logits, buf.ints({0, 3, 4}), loss, 3,
                     4, 3.0f);
    cuda::DeviceError error = emulated::takeRecordedError(device.ctx);
    check.expectTrue("softmax_xent records label 4 of row 2 out of range and "
                     "skips the row",
                     error.code == cuda::kLabelOutOfRange && error.row == 2 &&
                         error.value == 4 && error.bound == 4 &&
                         std::isfinite(buf.read(loss)[0]));
  }
  {
    Buffers buf(device.memory);
    void *table = buf.floats(ZRT_BF16, std::vector<float>(5 * 2, 1.0f));
    void *out = buf.nans(ZRT_BF16, 3 * 2);
    zrt_embedding(device.ctx, ZRT_BF16, buf.ints({0, 4, 5}), table, out, 3, 5,
                  2);
    cuda::DeviceError error = emulated::takeRecordedError(device.ctx);
    std::vector<float> got = buf.read(out);
    check.expectTrue("embedding records id 5 of row 2 out of range and "
                     "leaves its row alone",
                     error.code == cuda::kTokenOutOfRange && error.row == 2 &&
                         error.value == 5 && error.bound == 5 &&
                         got[3] == 1.0f && std::isnan(got[4]));
  }
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
      std::fprintf(
          stderr,
          "usage: %s [--full] "
          "[--fault=shfl-xor|mma-b-layout|cublaslt-mask|bad-label|bad-id] "
          "[--workers=N]\n",
          argv[0]);
      return 2;
    }
  }
  emulated::setWorkers(workers);
  testRng.seed(1234);
  ExactHostMemory memory;
  // Rank 0 of 1, and ranks 1 and 2 of 3 for shard_slice.
  zrt_context *cpu[3] = {createLocalContext(), createLocalContext(1, 3),
                         createLocalContext(2, 3)};
  zrt_context *device[3] = {createLocalContext(), createLocalContext(1, 3),
                            createLocalContext(2, 3)};
  for (zrt_context *ctx : device)
    emulated::attach(ctx);
  auto destroyAll = [&] {
    for (int i = 0; i < 3; ++i) {
      destroyContext(device[i]);
      destroyContext(cpu[i]);
    }
  };
  if (fault == "bad-label" || fault == "bad-id") {
    int status = runDataFault({device[0], memory}, fault);
    destroyAll();
    return status;
  }
  if (!fault.empty() && fault != "shfl-xor" && fault != "mma-b-layout" &&
      fault != "cublaslt-mask") {
    std::fprintf(stderr, "unknown --fault=%s\n", fault.c_str());
    return 2;
  }
  emulated::setFault(fault);
  std::printf("emulated CUDA kernels against the CPU backend%s%s\n",
              fault.empty() ? "" : ", broken on purpose: ", fault.c_str());
  const auto start = std::chrono::steady_clock::now();
  Checker check;
  auto harness = [&](int i) {
    return Harness{{cpu[i], memory}, {device[i], memory}, check};
  };
  Harness h = harness(0);
  Harness shards[2] = {harness(1), harness(2)};
  runKernelChecks(h, shards, shapes);
  testErrorRecords(h.device, check);
  destroyAll();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("(%.1f s)\n", seconds);
  return check.finish();
}
