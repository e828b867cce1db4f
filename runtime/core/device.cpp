//===- device.cpp - Choosing the backend; host access to buffers ----------===//
//
// The CUDA backend is compiled in only when CMake found the toolkit and NCCL
// (ZRT_HAVE_CUDA); this is the one core file that asks. Choosing it is
// collective: a job whose ranks ran on different backends would hang in its
// first collective (NCCL on some ranks, MPI on others), so every rank must
// reach the same verdict, and an error one rank sees (no GPU on its node) is
// agreed on and reported by every rank alike.
//
//===----------------------------------------------------------------------===//

#include "core/device.h"
#include "core/agree.h"
#include "core/check.h"
#include "core/context.h"
#include "core/convert.h"
#include "cpu/kernels.h"

#ifdef ZRT_HAVE_CUDA
#include "cuda/backend.h"
#endif

#include <cstring>

namespace zrt {

#ifdef ZRT_HAVE_CUDA

/// This rank's index among the ranks of its node, and how many there are.
static void localRank(zrt_context *ctx, int &rank, int &ranks) {
  rank = 0;
  ranks = 1;
  if (ctx->comm == MPI_COMM_NULL)
    return;
  quiesceComm(ctx);
  MPI_Comm node = MPI_COMM_NULL;
  ZRT_MPI_CHECK(MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank,
                                    MPI_INFO_NULL, &node));
  ZRT_MPI_CHECK(MPI_Comm_rank(node, &rank));
  ZRT_MPI_CHECK(MPI_Comm_size(node, &ranks));
  ZRT_MPI_CHECK(MPI_Comm_free(&node));
}

/// Whether every rank's `ok` holds (a context without MPI is one rank).
static bool allRanks(zrt_context *ctx, bool ok) {
  if (ctx->comm == MPI_COMM_NULL)
    return ok;
  quiesceComm(ctx);
  int mine = ok ? 1 : 0, all = 0;
  ZRT_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, ctx->comm));
  return all == 1;
}

static std::string selectCuda(zrt_context *ctx, DeviceChoice choice,
                              std::string &banner) {
  int rank = 0, ranks = 1;
  localRank(ctx, rank, ranks);
  std::string why;
  int gpus = cuda::visibleGpus(why);
  std::string problem;
  if (gpus <= 0)
    problem =
        "no CUDA GPU is visible to this rank (cudaGetDeviceCount: " + why + ")";
  else if (ranks > gpus)
    problem = std::to_string(ranks) + " ranks run on this node but it has " +
              std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") +
              "; the CUDA backend needs one GPU per rank (start at most " +
              std::to_string(gpus) + " ranks per node)";
  if (choice == DeviceChoice::Auto) {
    if (!allRanks(ctx, problem.empty())) {
      banner = "device: cpu";
      return "";
    }
  } else {
    std::string error =
        agreeOnError(ctx, problem.empty() ? "" : "--device=cuda: " + problem);
    if (!error.empty())
      return error;
  }
  cuda::attach(ctx, rank);
  banner = "device: cuda (" + cuda::gpuName(rank) + ", local rank " +
           std::to_string(rank) + " -> GPU " + std::to_string(rank) + ")";
  return "";
}

#endif // ZRT_HAVE_CUDA

namespace {
struct ExternalDevice {
  const char *name = nullptr;
  void (*attach)(zrt_context *) = nullptr;
};
ExternalDevice &externalDevice() {
  static ExternalDevice device;
  return device;
}
} // namespace

void registerExternalDevice(const char *name, void (*attach)(zrt_context *)) {
  externalDevice() = {name, attach};
}

const char *externalDeviceName() { return externalDevice().name; }

std::string selectDevice(zrt_context *ctx, DeviceChoice choice,
                         std::string &banner) {
  banner = "device: cpu";
  if (choice == DeviceChoice::Cpu)
    return "";
  if (choice == DeviceChoice::External) {
    // Every rank has it: it is linked into the executable.
    externalDevice().attach(ctx);
    banner = std::string("device: ") + externalDevice().name;
    return "";
  }
#ifdef ZRT_HAVE_CUDA
  return selectCuda(ctx, choice, banner);
#else
  (void)ctx;
  if (choice == DeviceChoice::Cuda)
    return "--device=cuda: this libzrt was built without the CUDA backend "
           "(configure with -DZERO_ENABLE_CUDA=ON where the CUDA toolkit and "
           "NCCL are installed)";
  return "";
#endif
}

void checkAttachable(const zrt_context *ctx, const char *who) {
  if (ctx->kernels != &cpu::cpuKernels())
    fatal("%s: the context is already on a device", who);
  if (!ctx->allocations.empty())
    fatal("%s: the context already holds %zu host buffers", who,
          ctx->allocations.size());
}

//===--- Host access ------------------------------------------------------===//

void copyToDevice(const zrt_context *ctx, void *dst, const void *src,
                  int64_t bytes) {
  if (bytes > 0)
    ctx->runtime->copyToDevice(dst, src, bytes);
}

void copyToHost(const zrt_context *ctx, void *dst, const void *src,
                int64_t bytes) {
  if (bytes > 0)
    ctx->runtime->copyToHost(dst, src, bytes);
}

void storeFloatsTo(const zrt_context *ctx, int32_t dtype, const float *src,
                   void *dst, int64_t first, int64_t count) {
  if (ctx->runtime->hostAddressable()) {
    storeFloats(dtype, src, dst, first, count);
    return;
  }
  if (count <= 0)
    return;
  int64_t size = dtypeBytes(dtype);
  std::vector<unsigned char> staging(count * size);
  storeFloats(dtype, src, staging.data(), 0, count);
  ctx->runtime->copyToDevice((char *)dst + first * size, staging.data(),
                             count * size);
}

void synchronizeDevice(const zrt_context *ctx) { ctx->runtime->synchronize(); }

HostBuffer::HostBuffer(const zrt_context *ctx, void *buffer, int64_t bytes,
                       bool load)
    : ctx(ctx), buffer(buffer), bytes(bytes), host(buffer) {
  if (ctx->runtime->hostAddressable())
    return;
  copy.resize(bytes > 0 ? bytes : 1);
  host = copy.data();
  if (load)
    copyToHost(ctx, host, buffer, bytes);
}

void HostBuffer::flush() {
  if (!ctx->runtime->hostAddressable())
    copyToDevice(ctx, buffer, host, bytes);
}

} // namespace zrt
