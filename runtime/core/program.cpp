//===- program.cpp - Checking and materialising a declared program --------===//
//
// The generated code declares every argument's role, dtype and shape; the
// runtime trusts none of it until validateProgram has checked it, because a
// wrong size here becomes a silent out-of-bounds write in a kernel later.
//
//===----------------------------------------------------------------------===//

#include "core/program.h"
#include "core/convert.h"
#include "core/device.h"
#include "core/init.h"

#include <algorithm>
#include <map>

namespace zrt {

static std::string str(int64_t value) { return std::to_string(value); }

const char *roleName(int32_t role) {
  static const char *const names[] = {
      "features", "labels", "param",   "adam_m",    "adam_v", "lr",
      "step",     "tokens", "targets", "positions", "master", "max_norm",
      "grad_accum", "beta1", "beta2", "eps", "weight_decay"};
  static_assert(sizeof(names) / sizeof(names[0]) == ZRT_ROLE_WEIGHT_DECAY + 1,
                "a zrt_role without a name");
  if (role < 0 || role > ZRT_ROLE_WEIGHT_DECAY)
    return "unknown role";
  return names[role];
}

static bool isState(int32_t role) {
  return role == ZRT_ROLE_PARAM || role == ZRT_ROLE_ADAM_M ||
         role == ZRT_ROLE_ADAM_V || role == ZRT_ROLE_MASTER ||
         role == ZRT_ROLE_GRAD_ACCUM;
}

static bool isScalar(int32_t role) {
  return role == ZRT_ROLE_LR || role == ZRT_ROLE_STEP ||
         role == ZRT_ROLE_MAX_NORM || role == ZRT_ROLE_BETA1 ||
         role == ZRT_ROLE_BETA2 || role == ZRT_ROLE_EPS ||
         role == ZRT_ROLE_WEIGHT_DECAY;
}

static bool isInt32(int32_t role) {
  return role == ZRT_ROLE_LABELS || role == ZRT_ROLE_TOKENS ||
         role == ZRT_ROLE_TARGETS || role == ZRT_ROLE_POSITIONS;
}

std::string shapeString(const int64_t *dims, int64_t rank) {
  std::string text = "[";
  for (int64_t d = 0; d < rank; ++d)
    text += (d ? ", " : "") + str(dims[d]);
  return text + "]";
}

int64_t localBatch(const zrt_context *ctx) {
  return ctx->program.globalBatch / ctx->worldSize;
}

int64_t elementBytes(const ArgDesc &arg) {
  return isInt32(arg.role) ? 4 : dtypeBytes(arg.dtype);
}

/// Elements a data argument must hold on this rank for the declared task.
static int64_t expectedDataNumel(const zrt_context *ctx, int32_t role) {
  int64_t rows = localBatch(ctx);
  switch (role) {
  case ZRT_ROLE_FEATURES:
    return rows * ctx->program.numFeatures;
  case ZRT_ROLE_LABELS:
    return rows;
  }
  return rows * ctx->program.seqLen; // tokens, targets, positions
}

static std::string validateShape(const ArgDesc &arg, const std::string &what) {
  if (arg.rank < 0 || arg.rank > 4)
    return what + " has rank " + str(arg.rank) + "; ranks are 0 to 4";
  int64_t numel = 1;
  for (int32_t d = 0; d < 4; ++d) {
    int64_t dim = arg.dims[d];
    if (d >= arg.rank && dim != 0)
      return what + " has rank " + str(arg.rank) + " but a non-zero dim" +
             str(d) + " (" + str(dim) + ")";
    if (d < arg.rank && dim <= 0)
      return what + " has dimension " + str(d) + " of size " + str(dim);
    if (d < arg.rank && __builtin_mul_overflow(numel, dim, &numel))
      return what + " has more elements than fit in 64 bits";
  }
  return "";
}

static std::string validateRole(const zrt_context *ctx, const ArgDesc &arg,
                                const std::string &what) {
  std::string shape = shapeString(arg.dims.data(), arg.rank);
  bool lm = ctx->program.task == ZRT_TASK_LM;
  if (isState(arg.role)) {
    bool exactAccum =
        arg.role == ZRT_ROLE_GRAD_ACCUM && arg.dtype == ZRT_EXACT;
    if (arg.role != ZRT_ROLE_PARAM && arg.dtype != ZRT_F32 && !exactAccum)
      return what + " is " + dtypeName(arg.dtype) +
             "; moments, master weights and accumulators are f32 "
             "(accumulators may also be exact)";
    if (arg.role == ZRT_ROLE_PARAM &&
        (arg.init < ZRT_INIT_ZEROS || arg.init > ZRT_INIT_ONES))
      return what + " has an unknown init " + str(arg.init);
    if (arg.name.empty())
      return what + " has no name; parameters are initialised and loaded "
                    "by name";
    return "";
  }
  if (arg.sharded)
    return what + " is declared sharded; only parameters, moments and "
                  "masters can be";
  if (isScalar(arg.role)) {
    if (arg.dtype != ZRT_F32 || arg.numel() != 1)
      return what + " must be one f32 element, not " + dtypeName(arg.dtype) +
             " " + shape;
    return "";
  }
  bool lmRole = arg.role == ZRT_ROLE_TOKENS || arg.role == ZRT_ROLE_TARGETS ||
                arg.role == ZRT_ROLE_POSITIONS;
  if (lmRole != lm)
    return what + " is " + roleName(arg.role) + " data, which a " +
           (lm ? "language-model" : "classification") +
           " program has no use for";
  int64_t expected = expectedDataNumel(ctx, arg.role);
  if (arg.numel() != expected)
    return what + " has shape " + shape + " (" + str(arg.numel()) +
           " elements) but this rank's " + roleName(arg.role) + " have " +
           str(expected) + " elements";
  return "";
}

static std::string validateArg(const zrt_context *ctx, const ArgDesc &arg,
                               int64_t index) {
  if (!arg.declared)
    return "argument " + str(index) + " was never declared";
  std::string what = "argument " + str(index) + " ('" + arg.name + "')";
  if (arg.role < ZRT_ROLE_FEATURES || arg.role > ZRT_ROLE_WEIGHT_DECAY)
    return what + " has an unknown role " + str(arg.role);
  what = roleName(arg.role) + std::string(" ") + what;
  if (dtypeBytes(arg.dtype) == 0)
    return what + " has an unknown dtype " + str(arg.dtype) +
           " (0 is f32, 1 is bf16, 2 is exact)";
  // int32 roles ignore their dtype; every other float role but the
  // accumulators is f32 or bf16.
  if (arg.dtype == ZRT_EXACT && arg.role != ZRT_ROLE_GRAD_ACCUM &&
      !isInt32(arg.role))
    return what + " is exact (ZRT_EXACT); only gradient accumulators "
                  "(grad_accum) can be";
  // Only the host optimizer's state may live on the host: every other
  // argument is read by device kernels.
  if (arg.host && arg.role != ZRT_ROLE_MASTER && arg.role != ZRT_ROLE_ADAM_M &&
      arg.role != ZRT_ROLE_ADAM_V)
    return what + " is declared in host memory (zrt_declare_host_arg); only "
                  "moments and master weights can be";
  std::string error = validateShape(arg, what);
  return error.empty() ? validateRole(ctx, arg, what) : error;
}

/// Names must be unique per role (a master pairs with one parameter), data
/// and scalars come at most once, and a master mirrors a parameter's shape.
static std::string validateTogether(const zrt_context *ctx) {
  std::map<std::pair<int32_t, std::string>, size_t> seen;
  for (size_t i = 0; i < ctx->args.size(); ++i) {
    const ArgDesc &arg = ctx->args[i];
    std::string key = isState(arg.role) ? arg.name : "";
    auto [it, fresh] = seen.insert({{arg.role, key}, i});
    if (!fresh)
      return "arguments " + str(it->second) + " and " + str(i) +
             (key.empty() ? " are both " + std::string(roleName(arg.role))
                          : " are both the " + std::string(roleName(arg.role)) +
                                " '" + key + "'");
  }
  for (size_t i = 0; i < ctx->args.size(); ++i) {
    const ArgDesc &arg = ctx->args[i];
    if (arg.role != ZRT_ROLE_MASTER)
      continue;
    int64_t p = findParam(ctx, arg.name);
    std::string what = "master argument " + str(i) + " ('" + arg.name + "')";
    if (p < 0)
      return what + " has no param of the same name";
    const ArgDesc &param = ctx->args[p];
    if (param.rank != arg.rank || param.dims != arg.dims)
      return what + " has shape " + shapeString(arg.dims.data(), arg.rank) +
             " but its param has " + shapeString(param.dims.data(), param.rank);
  }
  return "";
}

/// zrt_declare_shard_groups: groups of G ranks, 1 < G < W, that tile the
/// world. G = W is plain sharding and G = 1 plain replication, which the
/// program would declare by not calling it: either means a compiler bug.
static std::string validateShardGroups(const ProgramDesc &p) {
  if (!p.shardGroups)
    return "";
  int64_t g = p.shardGroupSize, w = p.worldSize;
  std::string what = "the program declares shard groups of " + str(g) +
                     (g == 1 ? " rank" : " ranks");
  if (g < 2)
    return what + "; a shard group has at least 2 ranks (1 < G < world size " +
           str(w) + ")";
  std::string whole = g == w ? ", the whole world size"
                             : ", more than the world size " + str(w);
  if (g >= w)
    return what + whole + "; hybrid sharding needs 1 < G < " + str(w) +
           " (without shard groups the state is sharded over every rank)";
  if (w % g != 0)
    return what + ", which do not divide the world size " + str(w);
  return "";
}

static std::string validateHeader(const zrt_context *ctx) {
  const ProgramDesc &p = ctx->program;
  if (!ctx->declarationError.empty())
    return ctx->declarationError;
  if (!p.declared)
    return "the program never called zrt_declare_program";
  if (p.microBatches < 1)
    return "the program declares " + str(p.microBatches) +
           " micro-batches per step; at least 1 is needed";
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
  if (p.task == ZRT_TASK_CLASSIFY) {
    if (p.globalBatch <= 0 || p.numFeatures <= 0 || p.numClasses <= 0 ||
        p.seqLen != 1)
      return "the program declares an empty or malformed data set (global "
             "batch " +
             str(p.globalBatch) + ", " + str(p.numFeatures) + " features, " +
             str(p.numClasses) + " classes, sequence length " + str(p.seqLen) +
             "; classification needs length 1)";
  } else if (p.task == ZRT_TASK_LM) {
    if (p.globalBatch <= 0 || p.seqLen <= 0 || p.numClasses <= 0)
      return "the program declares an empty data set (global batch " +
             str(p.globalBatch) + " sequences of " + str(p.seqLen) +
             " tokens, vocabulary " + str(p.numClasses) + ")";
  } else {
    return "the program declares an unknown task " + str(p.task) +
           " (0 is classification, 1 is language modelling)";
  }
  if (p.globalBatch % p.worldSize != 0)
    return "the global batch of " + str(p.globalBatch) +
           (p.task == ZRT_TASK_LM ? " sequences" : " rows") +
           " is not divisible by the world size " + str(p.worldSize);
  std::string groups = validateShardGroups(p);
  if (!groups.empty())
    return groups;
  if (p.deterministic) {
    int64_t local = p.globalBatch / p.worldSize;
    if (p.chunkRows < 1)
      return "the program declares deterministic chunks of " +
             str(p.chunkRows) + " rows; at least 1 is needed";
    if (local % p.chunkRows != 0)
      return "the program declares deterministic chunks of " +
             str(p.chunkRows) + " rows, which do not divide this rank's " +
             str(local) + (p.task == ZRT_TASK_LM ? " sequences" : " rows") +
             " per micro-batch";
  }
  return "";
}

std::string validateProgram(const zrt_context *ctx) {
  std::string error = validateHeader(ctx);
  if (!error.empty())
    return error;
  for (size_t i = 0; i < ctx->args.size(); ++i) {
    error = validateArg(ctx, ctx->args[i], i);
    if (!error.empty())
      return error;
  }
  return validateTogether(ctx);
}

int64_t findParam(const zrt_context *ctx, const std::string &name) {
  for (size_t i = 0; i < ctx->args.size(); ++i)
    if (ctx->args[i].role == ZRT_ROLE_PARAM && ctx->args[i].name == name)
      return i;
  return -1;
}

int64_t findMaster(const zrt_context *ctx, const std::string &name) {
  for (size_t i = 0; i < ctx->args.size(); ++i)
    if (ctx->args[i].role == ZRT_ROLE_MASTER && ctx->args[i].name == name)
      return i;
  return -1;
}

ArgSlice argSlice(const zrt_context *ctx, const ArgDesc &arg) {
  if (isScalar(arg.role))
    return {0, 1};
  int64_t numel = arg.numel();
  if (!arg.sharded)
    return {0, numel};
  // Shard r % G of ceil(numel / G) elements: the replicas of a shard group
  // hold the same slice.
  int64_t s = shardNumel(numel, shardCount(ctx));
  return {shardIndex(ctx) * s, s};
}

std::vector<void *> allocateArgs(zrt_context *ctx) {
  std::vector<void *> buffers;
  for (const ArgDesc &arg : ctx->args) {
    int64_t bytes = argSlice(ctx, arg).count * elementBytes(arg);
    buffers.push_back(
        zrt_alloc(ctx, bytes, zrt_arg_category(arg.role, arg.host)));
  }
  return buffers;
}

void initParams(zrt_context *ctx, const std::vector<void *> &buffers,
                uint64_t seed) {
  // Chunks bound the float32 scratch a large bf16 parameter needs.
  const int64_t chunk = 1 << 16;
  std::vector<float> scratch;
  for (size_t i = 0; i < ctx->args.size(); ++i) {
    const ArgDesc &arg = ctx->args[i];
    if (arg.role != ZRT_ROLE_PARAM && arg.role != ZRT_ROLE_MASTER)
      continue;
    const ArgDesc &param = ctx->args[findParam(ctx, arg.name)];
    ArgSlice slice = argSlice(ctx, arg);
    for (int64_t done = 0; done < slice.count; done += chunk) {
      int64_t n = std::min(chunk, slice.count - done);
      scratch.resize(n);
      initParamSlice(arg.name.c_str(), param.init, param.initScale, seed,
                     arg.numel(), slice.first + done, n, scratch.data());
      storeFloatsTo(ctx, arg.dtype, scratch.data(), buffers[i], done, n);
    }
  }
}

} // namespace zrt
