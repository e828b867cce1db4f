//===- calibrate.h - --calibrate: the time model's four numbers -*- C++ -*-===//
//
// zero-opt predicts when each collective runs from a time model of four
// numbers (passes/SchedulePrediction.h): GEMM FLOP/s, memory bandwidth,
// link bandwidth and link latency. `PROGRAM --calibrate=FILE` measures them
// on the ranks of the job, every rank busy at once as in training, and
// rank 0 writes them as JSON for `zero-opt --calibration=FILE`:
//   gemm_flops        the backend's zrt_matmul, float32, at a transformer
//                     block's shape (the fastest of a few runs, per rank)
//   memory_bandwidth  a STREAM triad over buffers far larger than the caches
//   link_*            all-reduces through the program's own path (zrt_*
//                     collectives on the communication thread) of 8 bytes and
//                     of 16 MiB, fitted to the ring model the compiler uses.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_CALIBRATE_H
#define ZRT_CORE_CALIBRATE_H

#include <string>

struct zrt_context;

namespace zrt {

/// Collective: measures the four numbers and rank 0 writes them to `path`
/// (through `path`.tmp and a rename). Returns "" or, on every rank, the
/// error. Needs at least two ranks (a link to measure).
std::string calibrate(zrt_context *ctx, const std::string &path);

} // namespace zrt

#endif // ZRT_CORE_CALIBRATE_H
