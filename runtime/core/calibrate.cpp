//===- calibrate.cpp - --calibrate: the time model's four numbers ---------===//

#include "core/calibrate.h"
#include "core/agree.h"
#include "core/check.h"
#include "core/context.h"
#include "core/schedule_check.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

namespace zrt {

namespace {

double seconds(int64_t ns) { return double(ns) * 1e-9; }

/// The fastest of `runs` timings of `fn` (the first call warms up).
double fastest(int runs, const std::function<void()> &fn) {
  fn();
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    int64_t begin = ScheduleCheck::nowNs();
    fn();
    best = std::min(best, seconds(ScheduleCheck::nowNs() - begin));
  }
  return best;
}

/// The slowest rank's value: a collective waits for it.
double slowest(zrt_context *ctx, double mine) {
  double all = mine;
  ZRT_MPI_CHECK(
      MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, ctx->comm));
  return all;
}

/// A matrix of `rows` x `cols` floats in the backend's memory, filled.
struct Buffer {
  zrt_context *ctx;
  float *data;
  Buffer(zrt_context *ctx, int64_t elements, float value) : ctx(ctx) {
    data = (float *)zrt_alloc(ctx, elements * 4, ZRT_MEM_ACTIVATION);
    zrt_fill(ctx, ZRT_F32, data, elements, value);
  }
  ~Buffer() { zrt_free(ctx, data); }
};

} // namespace

std::string calibrate(zrt_context *ctx, const std::string &path) {
  if (ctx->comm == MPI_COMM_NULL || ctx->worldSize < 2)
    return "--calibrate measures the link between ranks; run it under "
           "mpirun with at least 2 ranks";
  // GEMM: GPT-2's MLP projection for 512 tokens, 2 m n k FLOPs.
  const int64_t m = 512, n = 3072, k = 768;
  double gemmFlops;
  {
    Buffer a(ctx, m * k, 0.5f), b(ctx, k * n, 0.25f), c(ctx, m * n, 0);
    MPI_Barrier(ctx->comm);
    double t = fastest(3, [&] {
      zrt_matmul(ctx, ZRT_F32, a.data, b.data, c.data, m, n, k, 0, 0);
      ctx->runtime->synchronize();
    });
    gemmFlops = 2.0 * m * n * k / slowest(ctx, t);
  }
  // Memory: a[i] = b[i] + s c[i] over three 64 MiB arrays, 12 bytes an
  // element, on the host (the CPU backend's memory).
  double memoryBandwidth;
  {
    const int64_t elements = int64_t(16) << 20;
    std::vector<float> a(elements, 0), b(elements, 1), c(elements, 2);
    MPI_Barrier(ctx->comm);
    double t = fastest(3, [&] {
      float *pa = a.data();
      const float *pb = b.data(), *pc = c.data();
      for (int64_t i = 0; i < elements; ++i)
        pa[i] = pb[i] + 3.0f * pc[i];
    });
    memoryBandwidth = 12.0 * double(elements) / slowest(ctx, t);
  }
  // Link: all-reduces as the program runs them. The ring model: a W-rank
  // all-reduce of B bytes takes 2 (W - 1) (latency + B / W / bandwidth).
  double linkLatency, linkBandwidth;
  {
    const int64_t small = 2, large = int64_t(4) << 20; // floats
    Buffer x(ctx, large, 1.0f);
    auto allReduce = [&](int64_t count) {
      return fastest(5, [&] {
        zrt_all_reduce(ctx, ZRT_F32, x.data, x.data, count, "calibrate");
      });
    };
    MPI_Barrier(ctx->comm);
    double tSmall = slowest(ctx, allReduce(small));
    double tLarge = slowest(ctx, allReduce(large));
    double W = ctx->worldSize, steps = 2 * (W - 1);
    linkLatency = tSmall / steps;
    double perByte = std::max(1e-15, tLarge / steps - linkLatency);
    linkBandwidth = double(large) * 4 / W / perByte;
  }
  std::string error;
  if (ctx->rank == 0) {
    std::string tmp = path + ".tmp";
    FILE *file = std::fopen(tmp.c_str(), "w");
    if (!file) {
      error = "--calibrate=" + path + ": cannot write " + tmp + " (" +
              std::strerror(errno) + ")";
    } else {
      std::fprintf(file,
                   "{\n  \"gemm_flops\": %.6g,\n  \"memory_bandwidth\": "
                   "%.6g,\n  \"link_bandwidth\": %.6g,\n  \"link_latency\": "
                   "%.6g,\n  \"world_size\": %d\n}\n",
                   gemmFlops, memoryBandwidth, linkBandwidth, linkLatency,
                   ctx->worldSize);
      bool written = std::fflush(file) == 0;
      written = std::fclose(file) == 0 && written;
      if (!written || std::rename(tmp.c_str(), path.c_str()) != 0) {
        error = "--calibrate=" + path + ": cannot write it (" +
                std::strerror(errno) + ")";
        std::remove(tmp.c_str());
      } else {
        std::printf("calibration: GEMM %.1f GFLOP/s, memory %.1f GB/s, "
                    "link %.2f GB/s and %.1f us a step over %d ranks; "
                    "written to '%s' (zero-opt --calibration=%s)\n",
                    gemmFlops / 1e9, memoryBandwidth / 1e9,
                    linkBandwidth / 1e9, linkLatency * 1e6, ctx->worldSize,
                    path.c_str(), path.c_str());
      }
    }
  }
  return agreeOnError(ctx, error);
}

} // namespace zrt
