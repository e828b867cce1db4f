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

#include "core/driver.h"
#include "core/agree.h"
#include "core/batches.h"
#include "core/check.h"
#include "core/checkpoint.h"
#include "core/context.h"
#include "core/device.h"
#include "core/flags.h"
#include "core/ledger.h"
#include "core/program.h"
#include "cpu/comm_queue.h"
#include "core/trace.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
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
  if (lm && options.data.empty() && (options.steps > 0 || options.dumpBatch))
    return "this program trains a language model and needs --data=FILE, a "
           "token file (see runtime/README.md; --steps=0 runs without one)";
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

/// Parameters from --init-from or from the seed.
static void initialise(zrt_context *ctx, const Options &options,
                       const std::vector<void *> &buffers) {
  if (options.initFrom.empty()) {
    initParams(ctx, buffers, options.seed);
    return;
  }
  std::string unused;
  std::string error = loadParams(ctx, buffers, options.initFrom, unused);
  if (!error.empty())
    leaveAll(ctx, error, ExitFailed);
  if (ctx->rank == 0 && !unused.empty())
    std::fprintf(stderr, "warning: %s\n", unused.c_str());
}

/// Seconds since an arbitrary start. Not MPI_Wtime: during a step the
/// communication thread may be inside MPI, and the main thread must not be.
static double wallSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The step function's calls, timed; "step k" on the trace's compute track.
static float runStep(zrt_context *ctx, int64_t step, zrt_step_fn stepFn,
                     zrt_apply_fn applyFn, Batches &batches,
                     std::vector<void *> &buffers, const Options &options,
                     double &seconds) {
  Tracer *tracer = ctx->tracer.get();
  int64_t traceBegin = tracer ? tracer->now() : 0;
  // Each micro-batch's loss is its share of the step's mean.
  // On a device the program writes its loss into device memory (with
  // zrt_copy) and the kernels run asynchronously: the time includes waiting
  // for them, and the loss is read back once they are done.
  bool onDevice = !ctx->runtime->hostAddressable();
  float loss = 0;
  for (int64_t micro = 0; micro < ctx->program.microBatches; ++micro) {
    batches.fill(step, micro, buffers, options);
    float microLoss = 0;
    float *lossOut = &microLoss;
    if (onDevice) {
      lossOut = (float *)ctx->runtime->lossSlot();
      copyToDevice(ctx, lossOut, &microLoss, sizeof(float));
    }
    double start = wallSeconds();
    stepFn(ctx, buffers.data(), lossOut);
    synchronizeDevice(ctx);
    seconds += wallSeconds() - start;
    if (onDevice)
      copyToHost(ctx, &microLoss, lossOut, sizeof(float));
    loss += microLoss;
  }
  if (applyFn) {
    double start = wallSeconds();
    applyFn(ctx, buffers.data());
    synchronizeDevice(ctx);
    seconds += wallSeconds() - start;
  }
  if (tracer)
    tracer->record(Tracer::Compute, "step " + std::to_string(step + 1), "step",
                   traceBegin, tracer->now());
  return loss;
}

static void train(zrt_context *ctx, const Options &options, zrt_step_fn stepFn,
                  zrt_apply_fn applyFn, Batches &batches,
                  std::vector<void *> &buffers) {
  double seconds = 0;
  if (!options.trace.empty())
    ctx->tracer = std::make_unique<Tracer>(ctx);
  for (int64_t step = 0; step < options.steps; ++step) {
    float loss =
        runStep(ctx, step, stepFn, applyFn, batches, buffers, options, seconds);
    if (ctx->rank == 0) {
      std::printf("step %lld loss %.9g\n", (long long)step + 1, loss);
      std::fflush(stdout);
    }
    // Every rank holds the same (all-reduced) loss, so all stop together.
    // The step's update has already used the non-finite gradients: the
    // parameters are not saved.
    if (!std::isfinite(loss))
      leaveAll(ctx,
               "step " + std::to_string(step + 1) + ": the loss is " +
                   (std::isnan(loss) ? "nan" : "infinite") +
                   "; training stopped" +
                   (options.save.empty() ? "" : " and --save not written") +
                   " (lower --lr, clip with --clip-grad-norm, or check the "
                   "data)",
               ExitFailed);
  }
  if (!options.save.empty()) {
    std::string error = saveParams(ctx, buffers, options.save);
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
  }
  if (!options.quietMemory)
    printLedger(ctx);
  if (ctx->rank == 0 && options.steps > 0)
    printThroughput(ctx, options.steps, seconds);
  std::fflush(stdout);
  if (ctx->tracer) {
    std::string error = writeTrace(ctx, options.trace);
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
  }
}

extern "C" int zrt_run(int argc, char **argv, zrt_describe_fn describe,
                       zrt_step_fn stepFn, zrt_apply_fn applyFn) {
  initMpi(&argc, &argv);
  zrt_context *ctx = createContext(MPI_COMM_WORLD);

  Options options;
  std::string error;
  if (!parseFlags(argc, argv, options, error))
    leaveAll(ctx, error, ExitBadFlags);
  if (options.help) {
    if (ctx->rank == 0)
      std::fputs(usage(argc > 0 ? argv[0] : "program").c_str(), stdout);
    leaveAll(ctx, "", ExitOk);
  }
  ctx->checkCollectives = options.checkCollectives;
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
  error = checkFlagsForTask(ctx, options);
  if (!error.empty())
    leaveAll(ctx, error, ExitBadFlags);
  // Before anything is allocated: the backend owns the memory.
  std::string banner;
  error = selectDevice(ctx, options.device, banner);
  if (!error.empty())
    leaveAll(ctx, error, ExitBadFlags);

  if (!options.trace.empty()) {
    error = agreeOnError(ctx, ctx->rank == 0 ? checkTracePath(options.trace)
                                             : std::string());
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
  }
  if (ctx->rank == 0)
    std::printf("%s\n", banner.c_str());
  printProgram(ctx);
  Batches batches(ctx, options.seed);
  if (!options.data.empty()) {
    error = agreeOnError(ctx, batches.openTokens(options.data));
    if (!error.empty())
      leaveAll(ctx, error, ExitFailed);
  }
  std::vector<void *> buffers = allocateArgs(ctx);
  initialise(ctx, options, buffers);
  if (options.dumpBatch)
    batches.dump(options.steps, buffers, options);
  else
    train(ctx, options, stepFn, applyFn, batches, buffers);
  leaveAll(ctx, "", ExitOk);
}
