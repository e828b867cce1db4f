//===- flags.h - Command-line flags of a compiled program -------*- C++ -*-===//
#ifndef ZRT_CORE_FLAGS_H
#define ZRT_CORE_FLAGS_H

#include "core/device.h"

#include <cstdint>
#include <string>

namespace zrt {

struct Options {
  int64_t steps = 20;
  float lr = 1e-3f;
  uint64_t seed = 1234;
  /// Gradient-clipping threshold for ZRT_ROLE_MAX_NORM; 0 disables it.
  float clipGradNorm = 0.0f;
  std::string data;     // token file of an LM program
  std::string initFrom; // safetensors to load parameters from
  std::string save;     // safetensors to write after the last step
  std::string trace;    // Chrome trace JSON to write after the last step
  /// --device: auto, cpu, cuda or another registered backend's name
  /// (core/device.h).
  std::string device = "auto";
  /// --collective-timeout: seconds a rank waits for a collective before it
  /// stops the job; 0 when not given (ZRT_COLLECTIVE_TIMEOUT_S or 300 s).
  double collectiveTimeout = 0;
  /// --check-collectives: every collective compared across ranks first.
  bool checkCollectives = false;
  bool quietMemory = false;
  bool help = false;
  /// Hidden, for tests: print the batches of the first --steps steps as
  /// rank 0 sees them after a gather, instead of training.
  bool dumpBatch = false;
};

/// Parses argv (both `--flag=value` and `--flag value`). Returns false and
/// sets `error` to a one-line message naming the flag on bad input. Pure, so
/// every rank reaches the same verdict without talking to the others.
bool parseFlags(int argc, char **argv, Options &options, std::string &error);

/// The --help text.
std::string usage(const char *program);

} // namespace zrt

#endif // ZRT_CORE_FLAGS_H
