//===- calibrate.h - --calibrate: the time model's numbers ------*- C++ -*-===//
//
// zero-opt predicts when each collective runs from a time model
// (passes/Analysis/SchedulePrediction.h): GEMM FLOP/s, memory bandwidth, link
// bandwidth and latency, and how far collectives overlap compute.
// `PROGRAM --calibrate=FILE` measures them on the ranks of the job, every
// rank busy at once as in training, and rank 0 writes them as JSON for
// `zero-opt --calibration=FILE`:
//   gemm_flops        the rate of the program's own GEMMs over two training
//                     steps (after one to warm up), when the program can
//                     train (a language model needs --data); else that of
//                     the synthetic mix below (gemm_source says which)
//   gemm_flops_synthetic  zrt_matmul, float32, at a transformer's shapes:
//                     an MLP and a vocabulary projection, each forward and
//                     both gradients (the fastest of a few runs, per rank)
//   memory_bandwidth  a STREAM triad over buffers far larger than the caches
//   link_*            all-reduces through the program's own path (zrt_*
//                     collectives on the communication thread) of 8 bytes and
//                     of 16 MiB, fitted to the ring model the compiler uses
//   comm_overlap      GEMMs with and without an all-reduce in flight: the
//                     fraction of the collective they hide (0 where the
//                     communication thread shares the rank's core).
//   collective_start_seconds, kernel_overhead_seconds
//                     from the program's steps too: the mean time of a
//                     collective's start on the calling thread, and what
//                     the step spends outside kernels, starts and waits per
//                     kernel (allocation, bookkeeping, the calls); 0 when
//                     the program cannot take a step.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_CALIBRATE_H
#define ZRT_DRIVER_CALIBRATE_H

#include <string>

struct zrt_context;

namespace zrt {

struct Calibration {
  double gemmFlops = 0, syntheticGemmFlops = 0, memoryBandwidth = 0,
         linkBandwidth = 0, linkLatency = 0, commOverlap = 1;
  double collectiveStartSeconds = 0, kernelOverheadSeconds = 0;
  /// Whether gemmFlops is the program's own (else the synthetic mix's).
  bool gemmFromProgram = false;
};

/// Collective: measures the machine (everything but the program's GEMMs,
/// gemmFlops being the synthetic mix's). Returns "" or, on every rank, the
/// error. Needs at least two ranks (a link to measure).
std::string measureMachine(zrt_context *ctx, Calibration &calibration);

/// Collective: rank 0 writes `calibration` to `path` (through `path`.tmp
/// and a rename) and prints it. Returns "" or, on every rank, the error.
std::string writeCalibration(zrt_context *ctx, const std::string &path,
                             const Calibration &calibration);

} // namespace zrt

#endif // ZRT_DRIVER_CALIBRATE_H
