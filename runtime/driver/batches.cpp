//===- batches.cpp - Filling the data and scalar arguments of a step ------===//

#include "driver/batches.h"
#include "core/agree.h"
#include "core/check.h"
#include "core/convert.h"
#include "core/device.h"
#include "core/program.h"

#include <climits>
#include <cstdio>

namespace zrt {

Batches::Batches(zrt_context *ctx, uint64_t seed) : ctx(ctx) {
  const ProgramDesc &p = ctx->program;
  if (p.task == ZRT_TASK_CLASSIFY)
    synthetic =
        std::make_unique<SyntheticData>(seed, p.numFeatures, p.numClasses);
}

std::string Batches::openTokens(const std::string &flag,
                                const std::string &spec) {
  std::string error = agreeOnError(
      ctx, tokens.open(flag, spec, ctx->program.numClasses, ctx->program.seqLen,
                       ctx->rank, ctx->worldSize));
  return error.empty() ? checkSameTokens() : error;
}

std::string Batches::checkSameTokens() {
  // Ranks on different machines may mount different data under one path:
  // they would train on different streams without a word.
  uint64_t mine[2] = {tokens.fingerprint(), (uint64_t)tokens.numTokens()};
  uint64_t low[2], high[2];
  if (ctx->comm == MPI_COMM_NULL)
    return "";
  quiesceComm(ctx);
  ZRT_MPI_CHECK(MPI_Allreduce(mine, low, 2, MPI_UINT64_T, MPI_MIN, ctx->comm));
  ZRT_MPI_CHECK(MPI_Allreduce(mine, high, 2, MPI_UINT64_T, MPI_MAX, ctx->comm));
  if (low[0] == high[0] && low[1] == high[1])
    return "";
  return "the ranks see different token files (between " +
         std::to_string(low[1]) + " and " + std::to_string(high[1]) +
         " tokens, or other file names): every rank must read the same data";
}

std::pair<int64_t, int64_t> Batches::dataPosition(int64_t steps) const {
  if (synthetic)
    return {-1, -1};
  const ProgramDesc &p = ctx->program;
  return {tokens.numTokens(),
          tokens.rowStart(steps * p.microBatches, 0, p.globalBatch, p.seqLen)};
}

void Batches::resumeAt(int64_t steps, int64_t checkpointTokens,
                       int64_t nextToken) {
  // Checkpoints older than the data position, and a classifier's: the rows
  // follow from the step alone, as they always did.
  if (synthetic || nextToken < 0)
    return;
  const ProgramDesc &p = ctx->program;
  tokens.setOrigin({steps * p.microBatches * p.globalBatch, nextToken});
  if (ctx->rank == 0 && checkpointTokens != tokens.numTokens())
    std::printf("note: the training data holds %lld tokens, the checkpoint's "
                "held %lld: training continues at token %lld of the new "
                "stream\n",
                (long long)tokens.numTokens(), (long long)checkpointTokens,
                (long long)tokens.rowStart(steps * p.microBatches, 0,
                                           p.globalBatch, p.seqLen));
}

void Batches::fillClassify(int64_t step, const std::vector<void *> &buffers) {
  int64_t rows = localBatch(ctx), numFeatures = ctx->program.numFeatures;
  // Scratch for whichever of features/labels the program does not take,
  // and for features the program wants in bf16.
  std::vector<float> features(rows * numFeatures);
  std::vector<int32_t> spareLabels(rows);
  int32_t *labels = spareLabels.data();
  std::unique_ptr<HostBuffer> labelsBuffer;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (ctx->args[i].role == ZRT_ROLE_LABELS) {
      labelsBuffer = std::make_unique<HostBuffer>(ctx, buffers[i], rows * 4,
                                                  /*load=*/false);
      labels = (int32_t *)labelsBuffer->data();
    }
  int64_t firstSample = step * ctx->program.globalBatch + ctx->rank * rows;
  synthetic->fill(firstSample, rows, features.data(), labels);
  if (labelsBuffer)
    labelsBuffer->flush();
  for (size_t i = 0; i < buffers.size(); ++i)
    if (ctx->args[i].role == ZRT_ROLE_FEATURES)
      storeFloatsTo(ctx, ctx->args[i].dtype, features.data(), buffers[i], 0,
                    features.size());
}

void Batches::fillLm(int64_t step, const std::vector<void *> &buffers) {
  int64_t rows = localBatch(ctx);
  int64_t bytes = rows * ctx->program.seqLen * 4;
  std::unique_ptr<HostBuffer> hosts[3];
  int32_t *slots[3] = {nullptr, nullptr, nullptr};
  for (size_t i = 0; i < buffers.size(); ++i) {
    int32_t role = ctx->args[i].role;
    if (role >= ZRT_ROLE_TOKENS && role <= ZRT_ROLE_POSITIONS) {
      int32_t slot = role - ZRT_ROLE_TOKENS;
      hosts[slot] = std::make_unique<HostBuffer>(ctx, buffers[i], bytes,
                                                 /*load=*/false);
      slots[slot] = (int32_t *)hosts[slot]->data();
    }
  }
  tokens.fill(step, ctx->rank * rows, rows, ctx->program.globalBatch,
              ctx->program.seqLen, slots[0], slots[1], slots[2]);
  for (auto &host : hosts)
    if (host)
      host->flush();
}

void Batches::fill(int64_t step, int64_t micro,
                   const std::vector<void *> &buffers, const Options &options) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    float scalar;
    switch (ctx->args[i].role) {
    case ZRT_ROLE_LR:
      scalar = learningRate(options, step);
      break;
    case ZRT_ROLE_STEP:
      scalar = (float)(step + 1);
      break;
    case ZRT_ROLE_MAX_NORM:
      scalar = options.clipGradNorm;
      break;
    case ZRT_ROLE_BETA1:
      scalar = options.beta1;
      break;
    case ZRT_ROLE_BETA2:
      scalar = options.beta2;
      break;
    case ZRT_ROLE_EPS:
      scalar = options.eps;
      break;
    case ZRT_ROLE_WEIGHT_DECAY:
      scalar = options.weightDecay;
      break;
    default:
      continue;
    }
    copyToDevice(ctx, buffers[i], &scalar, sizeof(scalar));
  }
  int64_t batchIndex = step * ctx->program.microBatches + micro;
  if (synthetic)
    fillClassify(batchIndex, buffers);
  else
    fillLm(batchIndex, buffers);
}

void Batches::printRows(int64_t step, const ArgDesc &arg, const void *buffer) {
  int64_t bytes = arg.numel() * elementBytes(arg);
  if (bytes > INT_MAX)
    fatal("--dump-batch: argument '%s' is too large to gather",
          arg.name.c_str());
  std::vector<char> all(ctx->rank == 0 ? bytes * ctx->worldSize : 0);
  HostBuffer host(ctx, const_cast<void *>(buffer), bytes, /*load=*/true);
  quiesceComm(ctx);
  ZRT_MPI_CHECK(MPI_Gather(host.data(), (int)bytes, MPI_BYTE, all.data(),
                           (int)bytes, MPI_BYTE, 0, ctx->comm));
  if (ctx->rank != 0)
    return;
  int64_t rows = ctx->program.globalBatch;
  int64_t perRow = arg.numel() / localBatch(ctx);
  for (int64_t r = 0; r < rows; ++r) {
    std::printf("batch step %lld row %lld %s:", (long long)step + 1,
                (long long)r, roleName(arg.role));
    for (int64_t j = 0; j < perRow; ++j) {
      int64_t index = r * perRow + j;
      if (elementBytes(arg) == 4 && arg.role != ZRT_ROLE_FEATURES)
        std::printf(" %d", ((const int32_t *)all.data())[index]);
      else if (arg.dtype == ZRT_BF16)
        std::printf(" %.9g",
                    bf16BitsToFloat(((const uint16_t *)all.data())[index]));
      else
        std::printf(" %.9g", ((const float *)all.data())[index]);
    }
    std::printf("\n");
  }
}

void Batches::dump(int64_t steps, const std::vector<void *> &buffers,
                   const Options &options) {
  const ProgramDesc &p = ctx->program;
  for (int64_t step = 0; step < steps; ++step) {
    fill(step, 0, buffers, options);
    if (ctx->rank == 0 && !synthetic)
      for (int64_t r = 0; r < p.globalBatch; ++r)
        std::printf(
            "batch step %lld row %lld start %lld\n", (long long)step + 1,
            (long long)r,
            (long long)tokens.rowStart(step, r, p.globalBatch, p.seqLen));
    for (size_t i = 0; i < buffers.size(); ++i) {
      int32_t role = ctx->args[i].role;
      if (role == ZRT_ROLE_FEATURES || role == ZRT_ROLE_LABELS ||
          (role >= ZRT_ROLE_TOKENS && role <= ZRT_ROLE_POSITIONS))
        printRows(step, ctx->args[i], buffers[i]);
    }
  }
  std::fflush(stdout);
}

} // namespace zrt
