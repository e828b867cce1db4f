//===- program.cpp - Checking and materialising a declared program --------===//

#include "core/program.h"
#include "core/init.h"

#include <string>

namespace zrt {

static std::string str(int64_t value) { return std::to_string(value); }

static std::string validateArg(const ArgDesc &arg, int64_t index) {
  std::string what = "argument " + str(index) + " ('" + arg.name + "')";
  if (!arg.declared)
    return "argument " + str(index) + " was never declared";
  if (arg.role < ZRT_ROLE_FEATURES || arg.role > ZRT_ROLE_STEP)
    return what + " has an unknown role " + str(arg.role);
  bool isState = arg.role == ZRT_ROLE_PARAM || arg.role == ZRT_ROLE_ADAM_M ||
                 arg.role == ZRT_ROLE_ADAM_V;
  if (isState && arg.numel <= 0)
    return what + " has " + str(arg.numel) + " elements";
  if (arg.role == ZRT_ROLE_PARAM &&
      (arg.init < ZRT_INIT_ZEROS || arg.init > ZRT_INIT_NORMAL))
    return what + " has an unknown init " + str(arg.init);
  return "";
}

std::string validateProgram(const zrt_context *ctx) {
  const ProgramDesc &p = ctx->program;
  if (!p.declared)
    return "the program never called zrt_declare_program";
  if (p.abiVersion != ZRT_ABI_VERSION)
    return "this program was built for runtime ABI version " +
           str(p.abiVersion) + " but this libzrt implements version " +
           str(ZRT_ABI_VERSION) + "; rebuild it with a matching zero-opt";
  if (p.worldSize != ctx->worldSize)
    return "this program was compiled for world size " + str(p.worldSize) +
           " (zero-opt --world-size=" + str(p.worldSize) +
           ") but was started with " + str(ctx->worldSize) +
           (ctx->worldSize == 1 ? " rank" : " ranks") + " (mpirun -np " +
           str(ctx->worldSize) + ")";
  if (p.stage < 0 || p.stage > 3)
    return "the program declares ZeRO stage " + str(p.stage) +
           "; stages are 0 to 3";
  if (p.globalBatch <= 0 || p.numFeatures <= 0 || p.numClasses <= 0)
    return "the program declares an empty data set (global batch " +
           str(p.globalBatch) + ", " + str(p.numFeatures) + " features, " +
           str(p.numClasses) + " classes)";
  if (p.globalBatch % p.worldSize != 0)
    return "the global batch of " + str(p.globalBatch) +
           " rows is not divisible by the world size " + str(p.worldSize);
  for (size_t i = 0; i < ctx->args.size(); ++i) {
    std::string error = validateArg(ctx->args[i], i);
    if (!error.empty())
      return error;
  }
  return "";
}

int64_t localBatch(const zrt_context *ctx) {
  return ctx->program.globalBatch / ctx->worldSize;
}

static int64_t bufferBytes(const zrt_context *ctx, const ArgDesc &arg) {
  switch (arg.role) {
  case ZRT_ROLE_FEATURES:
    return localBatch(ctx) * ctx->program.numFeatures * (int64_t)sizeof(float);
  case ZRT_ROLE_LABELS:
    return localBatch(ctx) * (int64_t)sizeof(int32_t);
  case ZRT_ROLE_LR:
  case ZRT_ROLE_STEP:
    return sizeof(float);
  }
  int64_t numel =
      arg.sharded ? shardNumel(arg.numel, ctx->worldSize) : arg.numel;
  return numel * (int64_t)sizeof(float);
}

static int32_t bufferCategory(int32_t role) {
  switch (role) {
  case ZRT_ROLE_PARAM:
    return ZRT_MEM_PARAM;
  case ZRT_ROLE_ADAM_M:
  case ZRT_ROLE_ADAM_V:
    return ZRT_MEM_OPTIMIZER;
  }
  return ZRT_MEM_DATA;
}

std::vector<void *> allocateArgs(zrt_context *ctx, uint64_t seed) {
  std::vector<void *> buffers;
  for (const ArgDesc &arg : ctx->args) {
    void *buffer =
        zrt_alloc(ctx, bufferBytes(ctx, arg), bufferCategory(arg.role));
    buffers.push_back(buffer);
    if (arg.role != ZRT_ROLE_PARAM)
      continue;
    // A shard starts at rank * S in the zero-padded full tensor.
    int64_t count =
        arg.sharded ? shardNumel(arg.numel, ctx->worldSize) : arg.numel;
    int64_t first = arg.sharded ? ctx->rank * count : 0;
    initParamSlice(arg.name.c_str(), arg.init, arg.initScale, seed, arg.numel,
                   first, count, (float *)buffer);
  }
  return buffers;
}

} // namespace zrt
