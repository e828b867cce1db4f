//===- flags.h - Command-line flags of a compiled program -------*- C++ -*-===//
//
// Options holds every flag's value and its default (written only here);
// flags.cpp's table says how each is spelled, read, checked and explained.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_FLAGS_H
#define ZRT_DRIVER_FLAGS_H

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
  /// AdamW's hyperparameters (ZRT_ROLE_BETA1 ...); the defaults are
  /// torch.optim.AdamW's.
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weightDecay = 0.01f;
  std::string data;     // token file of an LM program
  std::string initFrom; // safetensors to load parameters from
  std::string save;     // safetensors to write after the last step
  /// --export-hf: a directory for model.safetensors + config.json after the
  /// last step (transformer programs).
  std::string exportHf;
  std::string trace; // Chrome trace JSON to write after the last step
  /// --checkpoint-dir: where full training-state checkpoints go
  /// (train_state.h), every --checkpoint-every steps and after the last.
  std::string checkpointDir;
  int64_t checkpointEvery = 0; // 0: only after the last step
  int64_t keep = 0;            // checkpoints kept; 0: all
  /// --lr-schedule: the learning rate of each step, from --lr (see
  /// learningRate): constant, cosine or linear decay to --min-lr after
  /// --warmup-steps of linear warm-up.
  enum class Schedule { Constant, Cosine, Linear };
  Schedule lrSchedule = Schedule::Constant;
  int64_t warmupSteps = 0;
  float minLr = 0.0f;
  /// --log-every: a progress line every N steps (0: none), and only those
  /// steps' 'step k loss x' lines unless --log-every-step; --log-json: the
  /// same fields per step, one JSON object a line.
  int64_t logEvery = 0;
  bool logEveryStep = false;
  std::string logJson;
  /// --eval-every: a validation loss every K steps and after the last (0:
  /// none), the mean over --eval-steps batches of --val-data (a token
  /// file; classifiers validate on synthetic data of another seed).
  int64_t evalEvery = 0;
  int64_t evalSteps = 8;
  std::string valData;
  /// --resume: a checkpoint (or a directory whose `latest` names one), or
  /// "latest" for --checkpoint-dir's newest; empty when not resuming.
  std::string resume;
  /// --device: auto, cpu, cuda or another registered backend's name
  /// (core/device.h).
  std::string device = "auto";
  /// --collective-timeout: seconds a rank waits for a collective before it
  /// stops the job; 0 when not given (ZRT_COLLECTIVE_TIMEOUT_S or 300 s).
  double collectiveTimeout = 0;
  /// --check-collectives: every collective compared across ranks first.
  bool checkCollectives = false;
  /// --check-schedule: every collective's measured start and wait
  /// compared with the compiler's plan at exit (CPU backend); a collective
  /// later than planned by more than --schedule-tolerance (milliseconds)
  /// fails the run.
  bool checkSchedule = false;
  /// --calibrate: measure the compiler's time model on this job's ranks,
  /// write it to this file and exit (driver/calibrate.h).
  std::string calibrate;
  double scheduleToleranceMs = 5;
  /// --check-finite: a non-finite gradient norm names the first parameter
  /// whose gradient is not finite (zrt_watch_gradient).
  bool checkFinite = false;
  bool quietMemory = false;
  bool help = false;
  bool helpMarkdown = false; // --help=markdown
  /// Hidden, for tests: print the batches of the first --steps steps as
  /// rank 0 sees them after a gather, instead of training.
  bool dumpBatch = false;
};

/// The learning rate of 0-based `step` under options' schedule: warm-up
/// from lr/W to lr over the first W steps, then constant, or a cosine or
/// linear decay from lr to --min-lr at the last of --steps.
float learningRate(const Options &options, int64_t step);

/// Parses argv (both `--flag=value` and `--flag value`). Returns false and
/// sets `error` to a one-line message naming the flag on bad input. Pure, so
/// every rank reaches the same verdict without talking to the others.
bool parseFlags(int argc, char **argv, Options &options, std::string &error);

/// The --help text, from the table of flags (flags.cpp).
std::string usage(const char *program);

/// --help=markdown: the same table as the README's Markdown table of the
/// runtime's flags (test/docs keeps the README equal to it).
std::string flagsMarkdown();

} // namespace zrt

#endif // ZRT_DRIVER_FLAGS_H
