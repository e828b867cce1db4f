//===- driver.cpp - zrt_run: the training loop of a compiled program ------===//
//
// Errors found from the flags or the program's declarations are found by
// every rank alike (they depend only on argv, the program and the world
// size), so every rank leaves through MPI_Finalize with the same exit code
// and only rank 0 prints. Anything only one rank can see goes through
// zrt::fatal, which aborts the whole job.
//
//===----------------------------------------------------------------------===//

#include "core/driver.h"
#include "core/check.h"
#include "core/context.h"
#include "core/data.h"
#include "core/flags.h"
#include "core/program.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace zrt;

namespace {
enum ExitCode { ExitOk = 0, ExitBadProgram = 1, ExitBadFlags = 2 };
} // namespace

/// Ends a job that every rank agrees must end.
[[noreturn]] static void leaveAll(zrt_context *ctx, int rank,
                                  const std::string &error, int code) {
  if (rank == 0 && !error.empty())
    std::fprintf(stderr, "error: %s\n", error.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  destroyContext(ctx);
  MPI_Finalize();
  std::exit(code);
}

static void fillData(zrt_context *ctx, const SyntheticData &data, int64_t step,
                     const std::vector<void *> &buffers, float lr) {
  int64_t rows = localBatch(ctx);
  int64_t firstSample =
      step * ctx->program.globalBatch + (int64_t)ctx->rank * rows;
  float *features = nullptr;
  int32_t *labels = nullptr;
  // Scratch for whichever of features/labels the program does not take.
  std::vector<float> spareFeatures;
  std::vector<int32_t> spareLabels;
  for (size_t i = 0; i < buffers.size(); ++i) {
    int32_t role = ctx->args[i].role;
    if (role == ZRT_ROLE_FEATURES)
      features = (float *)buffers[i];
    else if (role == ZRT_ROLE_LABELS)
      labels = (int32_t *)buffers[i];
    else if (role == ZRT_ROLE_STEP)
      *(float *)buffers[i] = (float)(step + 1);
    else if (role == ZRT_ROLE_LR)
      *(float *)buffers[i] = lr;
  }
  if (!features) {
    spareFeatures.resize(rows * ctx->program.numFeatures);
    features = spareFeatures.data();
  }
  if (!labels) {
    spareLabels.resize(rows);
    labels = spareLabels.data();
  }
  data.fill(firstSample, rows, features, labels);
}

/// Largest value over ranks, on rank 0: the rank that needs the most memory
/// is the one that decides whether the job fits.
static int64_t maxOverRanks(zrt_context *ctx, int64_t value) {
  int64_t result = value;
  ZRT_MPI_CHECK(
      MPI_Reduce(&value, &result, 1, MPI_INT64_T, MPI_MAX, 0, ctx->comm));
  return result;
}

static void printLedger(zrt_context *ctx) {
  const MemoryLedger &ledger = ctx->ledger;
  std::vector<int64_t> values;
  for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
    values.push_back(maxOverRanks(ctx, ledger.peak[c]));
  values.push_back(maxOverRanks(ctx, ledger.peakTotal));
  for (int k = 0; k < NumCollectiveKinds; ++k)
    values.push_back(maxOverRanks(ctx, ctx->collectives.bytes[k]));
  if (ctx->rank != 0)
    return;
  std::printf("memory and traffic per rank (max over %d ranks):\n",
              ctx->worldSize);
  for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
    std::printf("memory peak %s: %lld bytes\n", categoryName(c),
                (long long)values[c]);
  std::printf("memory peak total: %lld bytes\n",
              (long long)values[ZRT_MEM_NUM_CATEGORIES]);
  int64_t total = 0;
  for (int k = 0; k < NumCollectiveKinds; ++k) {
    int64_t bytes = values[ZRT_MEM_NUM_CATEGORIES + 1 + k];
    total += bytes;
    std::printf("comm %s: %lld bytes in %lld calls\n", collectiveName(k),
                (long long)bytes, (long long)ctx->collectives.calls[k]);
  }
  std::printf("comm total: %lld bytes\n", (long long)total);
}

static void train(zrt_context *ctx, const Options &options, zrt_step_fn stepFn,
                  std::vector<void *> &buffers) {
  const ProgramDesc &p = ctx->program;
  SyntheticData data(options.seed, p.numFeatures, p.numClasses);
  double seconds = 0;
  for (int64_t step = 0; step < options.steps; ++step) {
    fillData(ctx, data, step, buffers, options.lr);
    float loss = 0;
    double start = MPI_Wtime();
    stepFn(ctx, buffers.data(), &loss);
    seconds += MPI_Wtime() - start;
    if (ctx->rank == 0) {
      std::printf("step %lld loss %.9g\n", (long long)step + 1, loss);
      std::fflush(stdout);
    }
  }
  if (!options.quietMemory)
    printLedger(ctx);
  if (ctx->rank == 0 && options.steps > 0)
    std::printf("time per step: %.3f ms (rank 0, %lld steps)\n",
                seconds * 1e3 / options.steps, (long long)options.steps);
  std::fflush(stdout);
}

extern "C" int zrt_run(int argc, char **argv, zrt_describe_fn describe,
                       zrt_step_fn stepFn) {
  ZRT_MPI_CHECK(MPI_Init(&argc, &argv));
  ZRT_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  zrt_context *ctx = createContext(MPI_COMM_WORLD);

  Options options;
  std::string error;
  if (!parseFlags(argc, argv, options, error))
    leaveAll(ctx, ctx->rank, error, ExitBadFlags);
  if (options.help) {
    if (ctx->rank == 0)
      std::fputs(usage(argc > 0 ? argv[0] : "program").c_str(), stdout);
    leaveAll(ctx, ctx->rank, "", ExitOk);
  }

  describe(ctx);
  error = validateProgram(ctx);
  if (!error.empty())
    leaveAll(ctx, ctx->rank, error, ExitBadProgram);

  const ProgramDesc &p = ctx->program;
  if (ctx->rank == 0)
    std::printf("program: ZeRO stage %lld, world size %lld, global batch "
                "%lld, %lld features, %lld classes, %zu arguments\n",
                (long long)p.stage, (long long)p.worldSize,
                (long long)p.globalBatch, (long long)p.numFeatures,
                (long long)p.numClasses, ctx->args.size());
  std::vector<void *> buffers = allocateArgs(ctx, options.seed);
  train(ctx, options, stepFn, buffers);
  leaveAll(ctx, ctx->rank, "", ExitOk);
}
