//===- calibrate.cpp - --calibrate: the time model's numbers --------------===//

#include "driver/calibrate.h"
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

/// The median of `runs` timings of `fn` (after one to warm up): what a
/// collective typically takes in a step, where the fastest run would be
/// the exception.
double median(int runs, const std::function<void()> &fn) {
  fn();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    int64_t begin = ScheduleCheck::nowNs();
    fn();
    times.push_back(seconds(ScheduleCheck::nowNs() - begin));
  }
  std::nth_element(times.begin(), times.begin() + runs / 2, times.end());
  return times[runs / 2];
}

/// The slowest rank's value: a collective waits for it.
double slowest(zrt_context *ctx, double mine) {
  double all = mine;
  ZRT_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, ctx->comm));
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

std::string measureMachine(zrt_context *ctx, Calibration &calibration) {
  if (ctx->comm == MPI_COMM_NULL || ctx->worldSize < 2)
    return "--calibrate measures the link between ranks; run it under "
           "mpirun with at least 2 ranks";
  // GEMM: the products of a transformer's training step for 512 tokens of
  // width 768, each as forward (x w), input gradient (dy w^T) and weight
  // gradient (x^T dy): an MLP projection (n = 3072) and a vocabulary
  // projection (n = 32768, whose wide output a CPU BLAS packs at a lower
  // rate). The rate is their FLOPs over their time.
  const int64_t m = 512, n = 3072, k = 768;
  double gemmFlops;
  {
    double flops = 0, t = 0;
    for (int64_t width : {n, int64_t(32768)}) {
      Buffer x(ctx, m * k, 0.5f), w(ctx, k * width, 0.25f),
          y(ctx, m * width, 0);
      MPI_Barrier(ctx->comm);
      t += slowest(
          ctx, fastest(3, [&] {
            zrt_matmul(ctx, ZRT_F32, x.data, w.data, y.data, m, width, k, 0, 0);
            zrt_matmul(ctx, ZRT_F32, y.data, w.data, x.data, m, k, width, 0, 1);
            zrt_matmul(ctx, ZRT_F32, x.data, y.data, w.data, k, width, m, 1, 0);
            ctx->runtime->synchronize();
          }));
      flops += 3 * 2.0 * m * width * k;
    }
    gemmFlops = flops / t;
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
    // Started and waited for, as the program's overlapped collectives
    // are: the hand-over to the communication thread is part of the cost.
    auto allReduce = [&](int64_t count) {
      return median(9, [&] {
        zrt_wait(ctx, zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, ZRT_F32,
                                           x.data, x.data, count, "calibrate"));
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
  // Overlap: GEMMs on the compute thread while an all-reduce runs on the
  // communication thread. Apart they take g and c; together g + c when
  // they share the rank's core, max(g, c) when the communication has its
  // own; the fraction of the shorter one hidden, (g + c - both) / min(g,
  // c), is the time model's comm_overlap.
  double commOverlap;
  {
    const int64_t count = int64_t(4) << 20; // floats
    Buffer x(ctx, count, 1.0f);
    Buffer a(ctx, m * k, 0.5f), b(ctx, k * n, 0.25f), c(ctx, m * n, 0);
    auto gemm = [&] {
      zrt_matmul(ctx, ZRT_F32, a.data, b.data, c.data, m, n, k, 0, 0);
    };
    MPI_Barrier(ctx->comm);
    double oneGemm = slowest(ctx, fastest(3, [&] {
                               gemm();
                               ctx->runtime->synchronize();
                             }));
    double collective =
        slowest(ctx, fastest(3, [&] {
                  zrt_wait(ctx, zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD,
                                                     ZRT_F32, x.data, x.data,
                                                     count, "calibrate"));
                }));
    // As many GEMMs as take about as long as the collective, the same on
    // every rank.
    int gemms = int(std::clamp(collective / oneGemm + 0.5, 1.0, 64.0));
    double compute = slowest(ctx, fastest(3, [&] {
                               for (int i = 0; i < gemms; ++i)
                                 gemm();
                               ctx->runtime->synchronize();
                             }));
    double both = slowest(ctx, fastest(3, [&] {
                            int64_t handle = zrt_all_reduce_start(
                                ctx, ZRT_GROUP_WORLD, ZRT_F32, x.data, x.data,
                                count, "calibrate");
                            for (int i = 0; i < gemms; ++i)
                              gemm();
                            ctx->runtime->synchronize();
                            zrt_wait(ctx, handle);
                          }));
    // Below 0 when running them together costs more than apart (a
    // communication thread that polls for its peers takes the core from
    // the kernels for longer than the transfer): down to -1, twice the
    // transfer.
    commOverlap = std::clamp((compute + collective - both) /
                                 std::min(compute, collective),
                             -1.0, 1.0);
  }
  calibration.gemmFlops = calibration.syntheticGemmFlops = gemmFlops;
  calibration.memoryBandwidth = memoryBandwidth;
  calibration.linkBandwidth = linkBandwidth;
  calibration.linkLatency = linkLatency;
  calibration.commOverlap = commOverlap;
  return "";
}

std::string writeCalibration(zrt_context *ctx, const std::string &path,
                             const Calibration &c) {
  std::string error;
  if (ctx->rank == 0) {
    std::string tmp = path + ".tmp";
    FILE *file = std::fopen(tmp.c_str(), "w");
    if (!file) {
      error = "--calibrate=" + path + ": cannot write " + tmp + " (" +
              std::strerror(errno) + ")";
    } else {
      std::fprintf(file,
                   "{\n  \"gemm_flops\": %.6g,\n  \"gemm_source\": \"%s\",\n"
                   "  \"gemm_flops_synthetic\": %.6g,\n  "
                   "\"memory_bandwidth\": %.6g,\n  \"link_bandwidth\": %.6g,\n"
                   "  \"link_latency\": %.6g,\n  \"comm_overlap\": %.4f,\n"
                   "  \"collective_start_seconds\": %.6g,\n"
                   "  \"kernel_overhead_seconds\": %.6g,\n"
                   "  \"world_size\": %d\n}\n",
                   c.gemmFlops, c.gemmFromProgram ? "program" : "synthetic",
                   c.syntheticGemmFlops, c.memoryBandwidth, c.linkBandwidth,
                   c.linkLatency, c.commOverlap, c.collectiveStartSeconds,
                   c.kernelOverheadSeconds, ctx->worldSize);
      bool written = std::fflush(file) == 0;
      written = std::fclose(file) == 0 && written;
      if (!written || std::rename(tmp.c_str(), path.c_str()) != 0) {
        error = "--calibrate=" + path + ": cannot write it (" +
                std::strerror(errno) + ")";
        std::remove(tmp.c_str());
      } else {
        std::printf(
            "calibration: GEMM %.1f GFLOP/s (%s), memory %.1f GB/s, "
            "link %.2f GB/s and %.1f us a step over %d ranks, "
            "collectives %.0f%% overlapped with compute, %.0f us a "
            "collective start and %.0f us a kernel outside it; "
            "written to '%s' (zero-opt --calibration=%s)\n",
            c.gemmFlops / 1e9,
            c.gemmFromProgram ? "the program's own, median of four steps"
                              : "synthetic shapes; a language model's own with "
                                "--data",
            c.memoryBandwidth / 1e9, c.linkBandwidth / 1e9, c.linkLatency * 1e6,
            ctx->worldSize, c.commOverlap * 100, c.collectiveStartSeconds * 1e6,
            c.kernelOverheadSeconds * 1e6, path.c_str(), path.c_str());
      }
    }
  }
  return agreeOnError(ctx, error);
}

} // namespace zrt
