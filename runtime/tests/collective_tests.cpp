//===- collective_tests.cpp - Collectives against known values ------------===//
//
// Run under mpirun at several world sizes. The cases, blocking and
// asynchronous, are those of tests/collective_cases.h, shared with
// zrt-cuda-collective-tests; here their tensors are in host memory.
//
// `--overlap` starts a 16M-element all-reduce and runs kernels on the main
// thread while it is in flight (correctness only).
//
// `--fault=bad-label` makes the last rank hit a bad label while the others
// wait in an all-reduce (the job must abort, not hang); `--fault=mpi-error`
// makes an MPI call fail so the check macro's report can be inspected, and
// `--fault=comm-mpi-error` makes one fail on the communication thread.
// `--fault=double-wait` and `--fault=unknown-handle` misuse zrt_wait;
// `--fault=never-wait` leaves a collective unwaited at teardown (a warning);
// `--fault=diverge` has the ranks issue different collectives under
// --check-collectives.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"
#include "cpu/comm_queue.h"
#include "tests/checker.h"
#include "tests/collective_cases.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace zrt;

namespace {

/// The CPU backend's collectives read and write host memory in place: the
/// shared cases' tensors are plain host buffers on plain contexts.
class HostBuffers final : public BufferAdapter {
public:
  zrt_context *makeContext() const override {
    return createContext(MPI_COMM_WORLD);
  }
  void *allocate(zrt_context *, int64_t bytes) const override {
    return std::malloc(bytes);
  }
  void release(zrt_context *, void *ptr) const override { std::free(ptr); }
  void upload(zrt_context *, void *dst, const void *src,
              int64_t bytes) const override {
    std::memcpy(dst, src, bytes);
  }
  void download(zrt_context *, void *dst, const void *src,
                int64_t bytes) const override {
    std::memcpy(dst, src, bytes);
  }
};

/// A 16M-element all-reduce in flight while the main thread runs kernels.
/// Timing is not checked (the machine may have fewer cores than threads):
/// both results must be right.
int runOverlap() {
  Checker check(MPI_COMM_WORLD);
  zrt_context *ctx = createContext(MPI_COMM_WORLD);
  const int W = ctx->worldSize;
  const int64_t n = 16 << 20;
  std::vector<float> x(n), y(n, -1.0f);
  for (int64_t i = 0; i < n; ++i)
    x[i] = ctx->rank + (float)(i % 5);
  int64_t handle = zrt_all_reduce_start(ctx, ZRT_F32, x.data(), y.data(), n, "test");
  bool counted = ctx->collectives.bytes[AllReduce] == 2 * n * 4;
  const int64_t m = 128, iterations = 64;
  std::vector<float> a(m * m, 1.0f), b(m * m, 0.5f), c(m * m);
  bool kernelsOk = true;
  for (int64_t it = 0; it < iterations; ++it) {
    zrt_matmul(ctx, ZRT_F32, a.data(), b.data(), c.data(), m, m, m, 0, 0);
    zrt_add(ctx, ZRT_F32, c.data(), c.data(), c.data(), m * m);
    for (float value : c)
      kernelsOk &= value == 0.5f * m * 2;
  }
  zrt_wait(ctx, handle);
  bool reduced = true, inputKept = true;
  for (int64_t i = 0; i < n; ++i) {
    reduced &= y[i] == W * (W - 1) / 2.0f + W * (float)(i % 5);
    inputKept &= x[i] == ctx->rank + (float)(i % 5);
  }
  destroyContext(ctx);
  check.expectTrue("overlap: all_reduce of 16M floats counted at start",
                   counted);
  check.expectTrue("overlap: 64 matmul+add kernels right while it ran",
                   kernelsOk);
  check.expectTrue("overlap: all_reduce result right after the wait",
                   reduced && inputKept);
  return check.finish();
}

int runFault(zrt_context *ctx, const std::string &fault) {
  float one = 1;
  if (fault == "double-wait") {
    int64_t handle = zrt_all_reduce_start(ctx, ZRT_F32, &one, &one, 1, "test");
    zrt_wait(ctx, handle);
    zrt_wait(ctx, handle);
  } else if (fault == "unknown-handle") {
    zrt_all_reduce(ctx, ZRT_F32, &one, &one, 1, nullptr);
    zrt_wait(ctx, 42);
  } else if (fault == "comm-mpi-error") {
    // Through the queue's own interface: no zrt_* collective passes MPI a
    // bad argument, so the failure is made by hand, on the comm thread.
    CommOp op;
    op.run = [ctx] {
      float value = 0;
      ZRT_MPI_CHECK(MPI_Bcast(&value, -1, MPI_FLOAT, 0, ctx->comm));
    };
    zrt_wait(ctx, ctx->commQueue->start(std::move(op)));
  } else if (fault == "never-wait") {
    // Static: destroyContext runs them (and warns) after this returns.
    static float values[2] = {1, 2};
    zrt_all_reduce_start(ctx, ZRT_F32, &values[0], &values[0], 1, "test");
    zrt_all_reduce_start(ctx, ZRT_F32, &values[1], &values[1], 1, "test");
    return 0;
  } else if (fault == "bad-label") {
    float logits[2 * 3] = {0}, loss = 0, sum = 1;
    int32_t labels[2] = {1, 7};
    if (ctx->rank == ctx->worldSize - 1)
      zrt_softmax_xent(ctx, ZRT_F32, logits, labels, &loss, 2, 3, 2.0f);
    zrt_all_reduce(ctx, ZRT_F32, &sum, &sum, 1, "test");
  } else if (fault == "diverge") {
    // Rank 0 reduces one element, the others two: with the check on, the
    // first difference is named before either runs.
    ctx->checkCollectives = true;
    float values[2] = {1, 2};
    zrt_all_reduce(ctx, ZRT_F32, values, values, 1, "test");
    zrt_all_reduce(ctx, ZRT_F32, values, values, ctx->rank == 0 ? 1 : 2, "test");
  } else if (fault == "mpi-error") {
    float value = 0;
    ZRT_MPI_CHECK(MPI_Bcast(&value, -1, MPI_FLOAT, 0, ctx->comm));
  } else {
    std::fprintf(stderr, "unknown fault '%s'\n", fault.c_str());
    return 2;
  }
  std::printf("fault %s did not stop the job\n", fault.c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  initMpi(&argc, &argv);
  int status;
  if (argc == 2 && std::strncmp(argv[1], "--fault=", 8) == 0) {
    zrt_context *ctx = createContext(MPI_COMM_WORLD);
    status = runFault(ctx, argv[1] + 8);
    destroyContext(ctx);
  } else if (argc == 2 && std::strcmp(argv[1], "--overlap") == 0) {
    status = runOverlap();
  } else {
    Checker check(MPI_COMM_WORLD);
    runCollectiveCases(check, HostBuffers());
    status = check.finish();
  }
  ZRT_MPI_CHECK(MPI_Finalize());
  return status;
}
