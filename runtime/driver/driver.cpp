//===- driver.cpp - zrt_run: the training loop of a compiled program ------===//
//
// Errors found from the flags or the program's declarations are found by
// every rank alike (they depend only on argv, the program and the world
// size), so every rank leaves through MPI_Finalize with the same exit code
// and only rank 0 prints. Files (tokens, checkpoints) can fail on one rank
// only: the ranks agree on the outcome first (agree.h) and then leave the
// same way. Anything else only one rank can see goes through zrt::fatal,
// which aborts the whole job.
//
//===----------------------------------------------------------------------===//

#include "driver/driver.h"
#include "core/agree.h"
#include "core/check.h"
#include "core/comm_queue.h"
#include "core/context.h"
#include "core/device.h"
#include "core/exact.h"
#include "core/ledger.h"
#include "core/program.h"
#include "core/schedule_check.h"
#include "core/trace.h"
#include "driver/batches.h"
#include "driver/calibrate.h"
#include "driver/checkpoint.h"
#include "driver/checkpoint_dir.h"
#include "driver/flags.h"
#include "driver/train_state.h"

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

using namespace zrt;

namespace {
enum ExitCode { ExitOk = 0, ExitFailed = 1, ExitBadFlags = 2 };
} // namespace

/// Ends a job that every rank agrees must end.
[[noreturn]] static void leaveAll(zrt_context *ctx, const std::string &error,
                                  int code) {
  if (ctx->rank == 0 && !error.empty())
    std::fprintf(stderr, "error: %s\n", error.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  destroyContext(ctx);
  MPI_Finalize();
  std::exit(code);
}

/// Flags that only make sense with the program's task; "" if they fit.
static std::string checkFlagsForTask(const zrt_context *ctx,
                                     const Options &options) {
  bool lm = ctx->program.task == ZRT_TASK_LM;
  if (!lm && !options.data.empty())
    return "--data is for language-model programs; this program trains a "
           "classifier on synthetic data";
  if (!options.exportHf.empty() && ctx->program.hfConfig.empty())
    return "--export-hf writes a Hugging Face model; this program was not "
           "compiled from a transformer config (--model=gpt2..., "
           "--model-config)";
  if (!lm && !options.valData.empty())
    return "--val-data is for language-model programs; a classifier "
           "validates on synthetic data of another seed";
  if (lm && options.evalEvery > 0 && options.valData.empty())
    return "--eval-every needs --val-data=FILE, the validation token file";
  if (options.evalEvery == 0 && !options.valData.empty())
    return "--val-data is read every --eval-every=K steps; give K";
  if (lm && options.data.empty() && (options.steps > 0 || options.dumpBatch))
    return "this program trains a language model and needs --data=PATH, its "
           "token files (a file, a directory or a glob; see runtime/README.md; "
           "--steps=0 runs without one)";
  return "";
}

static void printProgram(const zrt_context *ctx) {
  const ProgramDesc &p = ctx->program;
  if (ctx->rank != 0)
    return;
  if (p.task == ZRT_TASK_LM)
    std::printf("program: ZeRO stage %lld, world size %lld, language model, "
                "global batch %lld x %lld tokens, vocabulary %lld, %zu "
                "arguments\n",
                (long long)p.stage, (long long)p.worldSize,
                (long long)p.globalBatch, (long long)p.seqLen,
                (long long)p.numClasses, ctx->args.size());
  else
    std::printf("program: ZeRO stage %lld, world size %lld, global batch "
                "%lld, %lld features, %lld classes, %zu arguments\n",
                (long long)p.stage, (long long)p.worldSize,
                (long long)p.globalBatch, (long long)p.numFeatures,
                (long long)p.numClasses, ctx->args.size());
}

/// Seconds since an arbitrary start. Not MPI_Wtime: during a step the
/// communication thread may be inside MPI, and the main thread must not be.
static double wallSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The training state: from --resume (which sets the step to start from,
/// the seed and the data position), else parameters from --init-from or
/// from the seed (step 0).
static TrainPosition initialise(zrt_context *ctx, Options &options,
                                const std::vector<void *> &buffers) {
  if (!options.resume.empty()) {
    std::string path =
        options.resume == "latest" ? options.checkpointDir : options.resume;
    TrainPosition position;
    std::string resolved;
    std::string error = loadTrainState(ctx, buffers, path, position, resolved);
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
    // The data and the learning rate follow from the step and the seed.
    options.seed = position.seed;
    if (ctx->rank == 0)
      std::printf("resumed from '%s': step %lld done, seed %llu\n",
                  resolved.c_str(), (long long)position.step,
                  (unsigned long long)position.seed);
    return position;
  }
  if (options.initFrom.empty()) {
    initParams(ctx, buffers, options.seed);
    return {};
  }
  std::string unused;
  std::string error = loadParams(ctx, buffers, options.initFrom, unused);
  if (!error.empty())
    leaveAll(ctx, error, ExitFailed);
  if (ctx->rank == 0 && !unused.empty())
    std::fprintf(stderr, "warning: %s\n", unused.c_str());
  return {};
}

/// Writes the checkpoint of `step` completed steps, or stops every rank.
static void checkpoint(zrt_context *ctx, const Options &options,
                       const Batches &batches,
                       const std::vector<void *> &buffers, int64_t step) {
  // The last step's host tasks (--offload=optimizer) write the state saved.
  quiesceHostTasks(ctx);
  double start = wallSeconds();
  int64_t bytes = 0;
  TrainPosition position{step, options.seed};
  std::tie(position.dataTokens, position.dataNextToken) =
      batches.dataPosition(step);
  std::string error = saveTrainState(ctx, buffers, options.checkpointDir,
                                     position, options.keep, bytes);
  if (!error.empty())
    leaveAll(ctx, error, ExitFailed);
  double seconds = wallSeconds() - start;
  if (ctx->rank == 0) {
    std::printf("checkpoint: step %lld written to '%s' (%.1f MB by %d ranks "
                "in %.2f s, %.0f MB/s)\n",
                (long long)step, options.checkpointDir.c_str(), bytes / 1e6,
                ctx->worldSize, seconds, bytes / 1e6 / std::max(seconds, 1e-9));
    std::fflush(stdout);
  }
}

namespace {
/// The signal (SIGINT, SIGTERM) this rank received, or 0: the run stops
/// after the current step (preemption).
volatile std::sig_atomic_t stopSignal = 0;
void onStopSignal(int signal) { stopSignal = signal; }
} // namespace

static void catchStopSignals() {
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART; // file and MPI calls go on undisturbed
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

/// One integer reduced over the ranks (MPI_MAX, MPI_MIN) on the
/// communication queue, which owns MPI while collectives may be in flight;
/// `value` itself without a communicator. Collective: every rank calls it.
static int64_t allReduceOnQueue(zrt_context *ctx, int64_t value, MPI_Op op,
                                const char *purpose) {
  int64_t result = value;
  if (ctx->comm == MPI_COMM_NULL)
    return result;
  CommOp comm;
  comm.run = [&] {
    ZRT_MPI_CHECK(
        MPI_Allreduce(&value, &result, 1, MPI_INT64_T, op, ctx->comm));
  };
  comm.info.kind = AllReduce;
  comm.info.tensorBytes = sizeof(int64_t);
  comm.info.label = purpose;
  comm.info.step = ctx->position.step;
  ctx->commQueue->wait(ctx->commQueue->start(std::move(comm)), nullptr);
  return result;
}

/// Collective: the stop signal any rank received, or 0. One integer
/// all-reduced after each step, so that every rank stops after the same
/// step even when only one was signalled. It runs on the communication
/// queue, so the collective watchdog bounds it like any other: a rank that
/// stalled between steps cannot hang the others here.
static int agreedStopSignal(zrt_context *ctx) {
  return (int)allReduceOnQueue(ctx, stopSignal, MPI_MAX,
                               "the end-of-step stop check");
}

/// What a step shows the driver.
struct StepResult {
  float loss = 0;
  /// The global gradient norm, when the program computed it (clipping's
  /// zrt_clip_coefficient; every program of zero-opt's pipeline does).
  std::optional<float> gradNorm;
};

/// The progress of one step, printed (--log-every, or every step on a
/// terminal) and logged (--log-json).
struct Progress {
  FILE *json = nullptr;
  int64_t every = 0;

  void report(const zrt_context *ctx, const Options &options, int64_t step,
              const StepResult &result, double seconds) {
    float loss = result.loss;
    // -1 in the JSON when the program computed no gradient norm.
    double norm = result.gradNorm ? *result.gradNorm : -1.0;
    const ProgramDesc &p = ctx->program;
    double items = (double)p.globalBatch * p.microBatches *
                   (p.task == ZRT_TASK_LM ? p.seqLen : 1);
    double perSecond = seconds > 0 ? items / seconds : 0;
    float lr = learningRate(options, step);
    int64_t peak = ctx->ledger.peakTotal;
    const char *unit = p.task == ZRT_TASK_LM ? "tokens" : "examples";
    if (every > 0 && (step + 1) % every == 0)
      std::printf("progress: step %lld/%lld, loss %.6g, grad norm %.4g, lr "
                  "%.4g, %.2f ms/step, %.0f %s/s, peak memory %.1f MB\n",
                  (long long)step + 1, (long long)options.steps, loss, norm, lr,
                  seconds * 1e3, perSecond, unit, peak / 1e6);
    if (json)
      std::fprintf(json,
                   "{\"step\": %lld, \"loss\": %.9g, \"grad_norm\": %.9g, "
                   "\"lr\": %.9g, \"ms_per_step\": %.4f, \"%s_per_s\": "
                   "%.1f, \"peak_memory_bytes\": %lld}\n",
                   (long long)step + 1, loss, norm, lr, seconds * 1e3, unit,
                   perSecond, (long long)peak);
  }
};

static std::string describeValue(float value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "infinite" : "-infinite";
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

/// What is not finite in a step ("" when all is): the loss, the gradient
/// norm (bf16 gradients that overflowed show here), or both.
static std::string nonFiniteStep(const StepResult &result) {
  bool lossBad = !std::isfinite(result.loss);
  bool normBad = result.gradNorm && !std::isfinite(*result.gradNorm);
  if (!lossBad && !normBad)
    return "";
  std::string norm =
      result.gradNorm ? describeValue(*result.gradNorm) : "not computed";
  if (lossBad)
    return "the loss is " + describeValue(result.loss) + " (gradient norm " +
           norm + ")";
  return "the gradient norm is " + norm + " (loss " +
         describeValue(result.loss) + ")";
}

/// --check-finite: the first parameter, in the program's order, whose
/// gradient is not finite on some rank (at stages 2-3 each rank sees its
/// shard), agreed by every rank; "" when the program watched none or all
/// were finite. Collective: every rank calls it.
static std::string firstNonFiniteGradient(zrt_context *ctx) {
  const GradientWatch &watch = ctx->gradientWatch;
  int64_t first = allReduceOnQueue(
      ctx, watch.firstNonFinite >= 0 ? watch.firstNonFinite : INT64_MAX,
      MPI_MIN, "--check-finite's first non-finite gradient");
  if (first < 0 || first >= (int64_t)watch.params.size())
    return "";
  return watch.params[first];
}

/// The functions a compiled program exports (zrt.h); `apply` and `eval`
/// may be null in hand-written programs.
struct ProgramEntries {
  zrt_step_fn step = nullptr;
  zrt_apply_fn apply = nullptr;
  zrt_step_fn eval = nullptr;
};

/// What one call of the step or validation function wrote: a float32, or
/// in a --deterministic program one ZRT_EXACT element.
struct MicroLoss {
  float value = 0;
  Exact exact = 0;
};

/// A sum of micro-batch losses: in `Float` (float32 for a step, double
/// for validation), or exactly in a --deterministic program, converted once
/// by value().
template <typename Float> struct LossSum {
  bool exact = false;
  Float sum = 0;
  Exact exactSum = 0;

  void add(const MicroLoss &loss) {
    if (exact)
      exactSum = exactAdd(exactSum, loss.exact);
    else
      sum += loss.value;
  }
  double value() const { return exact ? (double)fromExact(exactSum) : sum; }
};

/// Runs `fn` (the step or the validation step) on the arguments, waits for
/// it, and returns the loss it wrote; the time is added to `seconds`.
/// On a device the program writes its loss into device memory (with
/// zrt_copy) and the kernels run asynchronously: the time includes waiting
/// for them, and the loss is read back once they are done. A
/// --deterministic program writes a ZRT_EXACT loss, into host memory: it
/// never runs on a device (zrt_run refuses it there).
static MicroLoss runLossFunction(zrt_context *ctx, zrt_step_fn fn,
                                 std::vector<void *> &buffers,
                                 double &seconds) {
  bool onDevice = !ctx->runtime->hostAddressable();
  MicroLoss loss;
  void *lossOut = &loss.value;
  if (ctx->program.deterministic) {
    if (onDevice)
      fatal("a --deterministic program reached a device backend");
    lossOut = &loss.exact;
  } else if (onDevice) {
    lossOut = ctx->runtime->stepScalars() + DeviceRuntime::kLoss;
    copyToDevice(ctx, lossOut, &loss.value, sizeof(float));
  }
  double start = wallSeconds();
  fn(ctx, buffers.data(), lossOut);
  synchronizeDevice(ctx);
  seconds += wallSeconds() - start;
  if (onDevice)
    copyToHost(ctx, &loss.value, lossOut, sizeof(float));
  return loss;
}

/// The step function's calls, timed; "step k" on the trace's compute track.
static StepResult runStep(zrt_context *ctx, int64_t step,
                          const ProgramEntries &program, Batches &batches,
                          std::vector<void *> &buffers, const Options &options,
                          double &seconds) {
  Tracer *tracer = ctx->tracer.get();
  int64_t traceBegin = tracer ? tracer->now() : 0;
  // Each micro-batch's loss is its share of the step's mean: summed in
  // float32, or exactly and converted once (--deterministic).
  LossSum<float> loss;
  loss.exact = ctx->program.deterministic;
  ctx->gradNormRecorded = false;
  ctx->position = {step + 1, /*validation=*/false, /*collectives=*/0};
  ctx->gradientWatch.params.clear();
  ctx->gradientWatch.firstNonFinite = -1;
  for (int64_t micro = 0; micro < ctx->program.microBatches; ++micro) {
    {
      // On the trace, so that the data's share of a step can be read off.
      TraceScope data(ctx, "data", "data");
      batches.fill(step, micro, buffers, options);
    }
    loss.add(runLossFunction(ctx, program.step, buffers, seconds));
  }
  if (program.apply) {
    double start = wallSeconds();
    program.apply(ctx, buffers.data());
    synchronizeDevice(ctx);
    seconds += wallSeconds() - start;
  }
  if (tracer)
    tracer->record(Tracer::Compute, "step " + std::to_string(step + 1), "step",
                   traceBegin, tracer->now());
  StepResult result;
  result.loss = (float)loss.value();
  if (ctx->gradNormRecorded) {
    // Written by the apply (or the last micro-step), which synchronised.
    float squared = 0;
    copyToHost(ctx, &squared,
               ctx->runtime->stepScalars() + DeviceRuntime::kGradNormSquared,
               sizeof(float));
    result.gradNorm = std::sqrt(squared);
  }
  return result;
}

/// --eval-every: the mean loss of the forward alone over the same
/// --eval-steps validation batches each time (each batch, like a step, is
/// the sum of its micro-batches' shares of the mean); the arguments keep
/// the model, and the next step fills its own data again.
class Validation {
public:
  Validation(zrt_context *ctx, const Options &options, zrt_step_fn eval)
      : ctx(ctx), options(options), eval(eval),
        // A classifier's held-out data: the synthetic task of another seed.
        batches(ctx, options.seed + 0x5EED) {}

  /// Opens --val-data (collective); "" or the error.
  std::string open() {
    if (!eval)
      return "--eval-every needs a program with a validation step "
             "(zero_program_eval); recompile it with this zero-opt";
    if (options.valData.empty())
      return "";
    return batches.openTokens("--val-data", options.valData);
  }

  void run(int64_t step, std::vector<void *> &buffers, FILE *json) {
    // The validation step reads the parameters the host tasks write.
    quiesceHostTasks(ctx);
    Tracer *tracer = ctx->tracer.get();
    int64_t traceBegin = tracer ? tracer->now() : 0;
    double seconds = 0;
    // In double, or exactly and converted once (--deterministic).
    LossSum<double> sum;
    sum.exact = ctx->program.deterministic;
    ctx->position = {step, /*validation=*/true, /*collectives=*/0};
    for (int64_t batch = 0; batch < options.evalSteps; ++batch)
      for (int64_t micro = 0; micro < ctx->program.microBatches; ++micro) {
        batches.fill(batch, micro, buffers, options);
        sum.add(runLossFunction(ctx, eval, buffers, seconds));
      }
    double loss = sum.value() / options.evalSteps;
    if (tracer)
      tracer->record(Tracer::Compute, "validation", "step", traceBegin,
                     tracer->now());
    if (ctx->rank != 0)
      return;
    std::printf("validation: step %lld, loss %.9g (%lld batches, %.2f ms)\n",
                (long long)step, loss, (long long)options.evalSteps,
                seconds * 1e3);
    if (json)
      std::fprintf(json, "{\"step\": %lld, \"val_loss\": %.9g}\n",
                   (long long)step, loss);
    std::fflush(stdout);
  }

private:
  zrt_context *ctx;
  const Options &options;
  zrt_step_fn eval;
  Batches batches;
};

/// --calibrate: over four training steps after one to warm up, the rate of
/// the program's own GEMMs (their FLOPs over their time), the mean time of
/// a collective start, and what the step spends outside kernels, starts and
/// waits per kernel. Each is the median of the four steps' values (a step
/// that another process on the machine slowed does not set them), then the
/// slowest rank's, into `calibration`. The steps train the freshly
/// initialised weights, which nothing saves.
static std::string measureProgramSteps(zrt_context *ctx, Options &options,
                                       const ProgramEntries &program,
                                       Calibration &calibration) {
  std::vector<void *> buffers = allocateArgs(ctx);
  initialise(ctx, options, buffers);
  Batches batches(ctx, options.seed);
  if (!options.data.empty()) {
    std::string error = batches.openTokens("--data", options.data);
    if (!error.empty())
      return error;
  }
  constexpr int64_t kWarmUp = 1, kTimed = 4;
  // Per timed step: the GEMM rate, and the two costs negated to share one
  // MIN reduction with it (the slowest rank's rate, its largest costs).
  std::vector<double> rates, starts, outsides;
  for (int64_t step = 0; step < kWarmUp + kTimed; ++step) {
    ctx->timing = {};
    ctx->timing.on = step >= kWarmUp;
    double seconds = 0;
    runStep(ctx, step, program, batches, buffers, options, seconds);
    if (step < kWarmUp)
      continue;
    const auto &t = ctx->timing;
    double outside = seconds - double(t.kernelNs + t.startNs + t.waitNs) * 1e-9;
    if (t.gemmNs > 0)
      rates.push_back(t.gemmFlops / (double(t.gemmNs) * 1e-9));
    if (t.starts > 0)
      starts.push_back(-double(t.startNs) * 1e-9 / double(t.starts));
    if (t.kernels > 0)
      outsides.push_back(-std::max(0.0, outside) / double(t.kernels));
  }
  ctx->timing.on = false;
  double mine[3] = {ScheduleCheck::median(rates), ScheduleCheck::median(starts),
                    ScheduleCheck::median(outsides)};
  double slowest[3];
  ZRT_MPI_CHECK(
      MPI_Allreduce(mine, slowest, 3, MPI_DOUBLE, MPI_MIN, ctx->comm));
  if (slowest[0] > 0) {
    calibration.gemmFlops = slowest[0];
    calibration.gemmFromProgram = true;
  }
  calibration.collectiveStartSeconds = -slowest[1];
  calibration.kernelOverheadSeconds = -slowest[2];
  return "";
}

static void train(zrt_context *ctx, const Options &options,
                  const ProgramEntries &program, Batches &batches,
                  std::vector<void *> &buffers, int64_t firstStep) {
  double seconds = 0;
  if (!options.trace.empty())
    ctx->tracer = std::make_unique<Tracer>(ctx);
  if (firstStep >= options.steps && ctx->rank == 0)
    std::printf("nothing to run: the checkpoint is at step %lld and "
                "--steps=%lld\n",
                (long long)firstStep, (long long)options.steps);
  int64_t checkpointed = firstStep;
  Progress progress;
  // Opt-in: under mpirun rank 0's stdout is a pseudo-terminal, so "on a
  // terminal" cannot tell a person from a log; the step lines stay as they
  // are for the scripts that read them.
  progress.every = options.logEvery;
  if (ctx->rank == 0 && !options.logJson.empty()) {
    progress.json = std::fopen(options.logJson.c_str(), "w");
    if (!progress.json)
      std::fprintf(stderr, "warning: cannot write --log-json '%s': %s\n",
                   options.logJson.c_str(), std::strerror(errno));
  }
  std::optional<Validation> validation;
  if (options.evalEvery > 0) {
    validation.emplace(ctx, options, program.eval);
    std::string error = validation->open();
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
  }
  catchStopSignals();
  for (int64_t step = firstStep; step < options.steps; ++step) {
    double before = seconds;
    StepResult result =
        runStep(ctx, step, program, batches, buffers, options, seconds);
    if (ctx->rank == 0) {
      // With --log-every a long run prints its progress lines, and only
      // those steps' loss lines (or all with --log-every-step).
      bool logged = options.logEvery == 0 || options.logEveryStep ||
                    (step + 1) % options.logEvery == 0 ||
                    step + 1 == options.steps;
      if (logged)
        std::printf("step %lld loss %.9g\n", (long long)step + 1, result.loss);
      progress.report(ctx, options, step, result, seconds - before);
      std::fflush(stdout);
    }
    // Every rank holds the same (all-reduced) loss and norm, so all stop
    // together, before this step's checkpoint: its update has used the
    // non-finite gradients, and the last good checkpoint stays the latest.
    std::string nonFinite = nonFiniteStep(result);
    if (!nonFinite.empty() && options.checkFinite) {
      std::string param = firstNonFiniteGradient(ctx);
      nonFinite += param.empty()
                       ? "; every parameter's gradient is finite"
                       : "; the first parameter whose gradient is not "
                         "finite: " +
                             param;
    }
    if (!nonFinite.empty())
      leaveAll(ctx,
               "step " + std::to_string(step + 1) + ": " + nonFinite +
                   "; training stopped" +
                   (options.save.empty() ? "" : " and --save not written") +
                   (options.checkpointDir.empty()
                        ? ""
                        : " (no checkpoint of this step)") +
                   " (lower --lr, clip with --clip-grad-norm, or check the "
                   "data" +
                   (options.checkFinite
                        ? ""
                        : "; --check-finite names the first parameter whose "
                          "gradient is not finite") +
                   ")",
               ExitFailed);
    if (validation &&
        ((step + 1) % options.evalEvery == 0 || step + 1 == options.steps))
      validation->run(step + 1, buffers, progress.json);
    bool due = options.checkpointEvery > 0 &&
               (step + 1) % options.checkpointEvery == 0;
    if (!options.checkpointDir.empty() && due) {
      checkpoint(ctx, options, batches, buffers, step + 1);
      checkpointed = step + 1;
    }
    if (int signal = agreedStopSignal(ctx)) {
      const char *name = signal == SIGINT ? "SIGINT" : "SIGTERM";
      if (progress.json)
        std::fclose(progress.json);
      if (options.checkpointDir.empty())
        leaveAll(ctx,
                 std::string("stopped by ") + name + " after step " +
                     std::to_string(step + 1) +
                     "; nothing saved (no --checkpoint-dir)",
                 ExitFailed);
      if (checkpointed != step + 1)
        checkpoint(ctx, options, batches, buffers, step + 1);
      if (ctx->rank == 0)
        std::printf("stopped by %s after step %lld; continue with --resume\n",
                    name, (long long)step + 1);
      leaveAll(ctx, "", ExitOk);
    }
  }
  if (progress.json)
    std::fclose(progress.json);
  // --save, --export-hf and the checkpoint read what the host tasks write.
  quiesceHostTasks(ctx);
  if (!options.checkpointDir.empty() && checkpointed < options.steps)
    checkpoint(ctx, options, batches, buffers, options.steps);
  if (!options.save.empty()) {
    std::string error = saveParams(ctx, buffers, options.save);
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
  }
  if (!options.exportHf.empty()) {
    std::string error = exportHuggingFace(ctx, buffers, options.exportHf);
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
    if (ctx->rank == 0)
      std::printf("exported: '%s' (model.safetensors, config.json)\n",
                  options.exportHf.c_str());
  }
  if (!options.quietMemory)
    printLedger(ctx);
  int64_t stepsRun = std::max<int64_t>(0, options.steps - firstStep);
  if (ctx->rank == 0 && stepsRun > 0)
    printThroughput(ctx, stepsRun, seconds);
  std::fflush(stdout);
  if (ctx->tracer) {
    std::string error = writeTrace(ctx, options.trace);
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
  }
  if (ctx->checkSchedule) {
    quiesceComm(ctx);
    if (!ctx->schedule->verdict(ctx, options.scheduleToleranceMs))
      leaveAll(ctx, "", ExitFailed);
  }
}

extern "C" int zrt_run(int argc, char **argv, zrt_describe_fn describe,
                       zrt_step_fn stepFn, zrt_apply_fn applyFn,
                       zrt_step_fn evalFn) {
  initMpi(&argc, &argv);
  zrt_context *ctx = createContext(MPI_COMM_WORLD);

  Options options;
  std::string error;
  if (!parseFlags(argc, argv, options, error))
    leaveAll(ctx, error, ExitBadFlags);
  if (options.help) {
    if (ctx->rank == 0)
      std::fputs(options.helpMarkdown
                     ? flagsMarkdown().c_str()
                     : usage(argc > 0 ? argv[0] : "program").c_str(),
                 stdout);
    leaveAll(ctx, "", ExitOk);
  }
  ctx->checkCollectives = options.checkCollectives;
  ctx->gradientWatch.enabled = options.checkFinite;
  if (options.collectiveTimeout > 0) {
    ctx->commQueue->setTimeout(options.collectiveTimeout);
    // The CUDA backend, chosen below, reads its watchdog from here too.
    setenv("ZRT_COLLECTIVE_TIMEOUT_S",
           std::to_string(options.collectiveTimeout).c_str(), 1);
  }

  describe(ctx);
  error = validateProgram(ctx);
  if (!error.empty())
    leaveAll(ctx, error, ExitFailed);
  // Two different executables in one job would deadlock or mix tensors of
  // different models: every rank must have declared the same program.
  error = checkSameProgram(ctx);
  if (!error.empty())
    leaveAll(ctx, error, ExitFailed);
  // Before the device: a GPU backend makes its communicators from these.
  formShardGroups(ctx);
  // --calibrate measures the machine instead of training: no data needed
  // (with it, the program's own GEMMs are timed too).
  std::string taskProblem = checkFlagsForTask(ctx, options);
  if (!taskProblem.empty() && options.calibrate.empty())
    leaveAll(ctx, taskProblem, ExitBadFlags);
  // Before anything is allocated: the backend owns the memory. The exact
  // sums of a --deterministic program (128-bit integers) have no NCCL
  // reduction: --device=auto picks the CPU for it, a device is refused.
  bool deterministic = ctx->program.deterministic;
  std::string banner;
  error = selectDevice(
      ctx, deterministic && options.device == "auto" ? "cpu" : options.device,
      banner);
  if (!error.empty())
    leaveAll(ctx, error, ExitBadFlags);
  if (deterministic && !ctx->runtime->hostAddressable())
    leaveAll(ctx,
             "this program was compiled with --deterministic: its exact sums "
             "run on the CPU backend only; run it with --device=cpu (or "
             "--device=auto, which picks the CPU for it), or recompile it "
             "without --deterministic to train on the GPU",
             ExitBadFlags);

  if (!options.calibrate.empty()) {
    Calibration calibration;
    error = measureMachine(ctx, calibration);
    // The program's steps are timed where the kernels finish as they
    // return (the CPU backend) and the program can take a step.
    if (error.empty() && taskProblem.empty() && ctx->runtime->hostAddressable())
      error = measureProgramSteps(ctx, options, {stepFn, applyFn, evalFn},
                                  calibration);
    if (error.empty())
      error = writeCalibration(ctx, options.calibrate, calibration);
    leaveAll(ctx, error, error.empty() ? ExitOk : ExitFailed);
  }
  if (options.checkSchedule) {
    // The plan is of one communication thread running collectives in
    // start order: the CPU backend's queue.
    if (!ctx->runtime->hostAddressable())
      leaveAll(ctx,
               "--check-schedule measures the CPU backend's communication "
               "thread; run it with --device=cpu",
               ExitBadFlags);
    ctx->checkSchedule = true;
  }
  if (!options.trace.empty()) {
    error = agreeOnError(ctx, ctx->rank == 0 ? checkTracePath(options.trace)
                                             : std::string());
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
  }
  if (ctx->rank == 0)
    std::printf("%s\n", banner.c_str());
  printProgram(ctx);
  if (ctx->program.shardGroups && ctx->rank == 0)
    std::printf("shard groups: sharded state over groups of %lld consecutive "
                "ranks, replicated %lld times (rank r holds shard r %% %lld)\n",
                (long long)shardCount(ctx),
                (long long)(ctx->worldSize / shardCount(ctx)),
                (long long)shardCount(ctx));
  if (deterministic && ctx->rank == 0)
    std::printf("deterministic: exact sums; each rank computes chunks of "
                "%lld rows per micro-batch (global batch / (world size x "
                "grad-accum)); runs with the same chunk size give bitwise "
                "identical results\n",
                (long long)ctx->program.chunkRows);
  // Before the resume reads it: this job's from here on.
  if (!options.checkpointDir.empty() && !options.dumpBatch) {
    error = claimCheckpointDir(ctx, options.checkpointDir);
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
  }
  std::vector<void *> buffers = allocateArgs(ctx);
  TrainPosition start = initialise(ctx, options, buffers);
  // After initialise: a resumed run takes the checkpoint's seed.
  Batches batches(ctx, options.seed);
  if (!options.data.empty()) {
    error = batches.openTokens("--data", options.data);
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
    batches.resumeAt(start.step, start.dataTokens, start.dataNextToken);
  }
  if (options.dumpBatch)
    batches.dump(options.steps, buffers, options);
  else
    train(ctx, options, {stepFn, applyFn, evalFn}, batches, buffers,
          start.step);
  leaveAll(ctx, "", ExitOk);
}
