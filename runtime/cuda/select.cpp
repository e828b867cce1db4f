//===- select.cpp - --device=cuda and auto: choosing GPUs -----------------===//
//
// Registers the CUDA backend for --device (core/device.h). A source of
// libzrt itself rather than of zrt_cuda (runtime/CMakeLists.txt), built only
// with the CUDA backend, so that its registration is always linked in; it
// reaches the backend through backend.h alone and compiles without the CUDA
// toolkit's headers.
//
// The choice is collective: a job whose ranks ran on different backends
// would hang in its first collective (NCCL on some ranks, MPI on others), so
// every rank reaches the same verdict, and an error one rank sees (no GPU on
// its node) is agreed on and reported by every rank alike.
//
//===----------------------------------------------------------------------===//

#include "core/agree.h"
#include "core/check.h"
#include "core/context.h"
#include "core/device.h"
#include "cuda/backend.h"

namespace zrt::cuda {

namespace {

/// This rank's index among the ranks of its node, and how many there are.
void localRank(zrt_context *ctx, int &rank, int &ranks) {
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
bool allRanks(zrt_context *ctx, bool ok) {
  if (ctx->comm == MPI_COMM_NULL)
    return ok;
  quiesceComm(ctx);
  int mine = ok ? 1 : 0, all = 0;
  ZRT_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, ctx->comm));
  return all == 1;
}

/// Backend::select: one GPU per rank, by the rank's index among the ranks
/// of its node.
std::string select(zrt_context *ctx, bool required, std::string &banner) {
  int rank = 0, ranks = 1;
  localRank(ctx, rank, ranks);
  std::string why;
  int gpus = visibleGpus(why);
  std::string problem;
  if (gpus <= 0)
    problem =
        "no CUDA GPU is visible to this rank (cudaGetDeviceCount: " + why + ")";
  else if (ranks > gpus)
    problem = std::to_string(ranks) + " ranks run on this node but it has " +
              std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") +
              "; the CUDA backend needs one GPU per rank (start at most " +
              std::to_string(gpus) + " ranks per node)";
  if (!required) {
    if (!allRanks(ctx, problem.empty()))
      return "";
  } else {
    std::string error =
        agreeOnError(ctx, problem.empty() ? "" : "--device=cuda: " + problem);
    if (!error.empty())
      return error;
  }
  attach(ctx, rank);
  banner = "device: cuda (" + gpuName(rank) + ", local rank " +
           std::to_string(rank) + " -> GPU " + std::to_string(rank) + ")";
  return "";
}

const BackendRegistration registration({"cuda", select});

} // namespace

} // namespace zrt::cuda
