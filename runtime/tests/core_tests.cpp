//===- core_tests.cpp - Checks of the runtime's core, no MPI needed -------===//
//
// Program declarations and their validation messages, parameter init at
// every world size and stage (bf16 parameters and float32 masters
// included), and the file formats (file_checks.cpp). Ranks are simulated
// with local contexts: everything checked here is computed per rank without
// communication, so W local contexts are exactly what W ranks would hold.
//
//===----------------------------------------------------------------------===//

#include "core/context.h"
#include "core/convert.h"
#include "core/program.h"
#include "tests/checker.h"
#include "tests/file_checks.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace zrt;

namespace {

using Declare = std::function<void(zrt_context *)>;

/// A small mixed program: a bf16 parameter with its master, a float32 one,
/// a ones-initialised gain, moments; `stage` decides what is sharded.
void declareMixed(zrt_context *ctx, int worldSize, int stage) {
  int shardState = stage >= 1, shardParams = stage == 3;
  zrt_declare_program(ctx, ZRT_ABI_VERSION, worldSize, stage, ZRT_TASK_LM, 6, 4,
                      0, 50);
  int64_t bl = 6 / worldSize;
  zrt_declare_arg(ctx, 0, "tokens", ZRT_ROLE_TOKENS, ZRT_F32, 2, bl, 4, 0, 0, 0,
                  0, 0);
  zrt_declare_arg(ctx, 1, "lr", ZRT_ROLE_LR, ZRT_F32, 0, 0, 0, 0, 0, 0, 0, 0);
  zrt_declare_arg(ctx, 2, "wte", ZRT_ROLE_PARAM, ZRT_BF16, 2, 50, 7, 0, 0,
                  shardParams, ZRT_INIT_NORMAL, 0.5f);
  zrt_declare_arg(ctx, 3, "wte", ZRT_ROLE_MASTER, ZRT_F32, 2, 50, 7, 0, 0,
                  shardState, ZRT_INIT_NORMAL, 0.5f);
  zrt_declare_arg(ctx, 4, "bias", ZRT_ROLE_PARAM, ZRT_F32, 1, 11, 0, 0, 0,
                  shardParams, ZRT_INIT_UNIFORM, 0.1f);
  zrt_declare_arg(ctx, 5, "gain", ZRT_ROLE_PARAM, ZRT_BF16, 1, 7, 0, 0, 0,
                  shardParams, ZRT_INIT_ONES, 0.0f);
  zrt_declare_arg(ctx, 6, "gain", ZRT_ROLE_MASTER, ZRT_F32, 1, 7, 0, 0, 0,
                  shardState, ZRT_INIT_ONES, 0.0f);
  zrt_declare_arg(ctx, 7, "wte.adam_m", ZRT_ROLE_ADAM_M, ZRT_F32, 2, 50, 7, 0,
                  0, shardState, 0, 0);
}

/// The full float32 value of every PARAM/MASTER, assembled from the shards
/// of `worldSize` simulated ranks.
std::vector<std::vector<float>> initialTensors(int worldSize, int stage) {
  std::vector<std::vector<float>> full;
  for (int rank = 0; rank < worldSize; ++rank) {
    zrt_context *ctx = createLocalContext(rank, worldSize);
    declareMixed(ctx, worldSize, stage);
    std::vector<void *> buffers = allocateArgs(ctx);
    initParams(ctx, buffers, 99);
    full.resize(ctx->args.size());
    for (size_t i = 0; i < ctx->args.size(); ++i) {
      const ArgDesc &arg = ctx->args[i];
      // Data arguments hold this rank's rows: not comparable across W.
      if (arg.role != ZRT_ROLE_PARAM && arg.role != ZRT_ROLE_MASTER &&
          arg.role != ZRT_ROLE_ADAM_M)
        continue;
      ArgSlice slice = argSlice(ctx, arg);
      full[i].resize(arg.numel());
      for (int64_t j = 0; j < slice.count; ++j) {
        int64_t index = slice.first + j;
        float value = arg.dtype == ZRT_BF16
                          ? bf16BitsToFloat(((uint16_t *)buffers[i])[j])
                          : ((float *)buffers[i])[j];
        if (index < arg.numel())
          full[i][index] = value;
      }
    }
    destroyContext(ctx);
  }
  return full;
}

void checkInit(Checker &check) {
  auto reference = initialTensors(1, 0);
  bool same = true;
  for (int w = 2; w <= 3; ++w)
    for (int stage = 0; stage <= 3; ++stage)
      same &= initialTensors(w, stage) == reference;
  check.expectTrue("init: every world size and stage holds the same tensors",
                   same);
  bool rounded = true;
  for (size_t j = 0; j < reference[2].size(); ++j)
    rounded &=
        reference[2][j] == bf16BitsToFloat(floatToBf16Bits(reference[3][j]));
  bool differs = reference[3] != reference[2]; // the master is not rounded
  check.expectTrue("init: a bf16 param is its float32 master, rounded",
                   rounded && differs);
  bool ones = true;
  for (size_t j = 0; j < 7; ++j)
    ones &= reference[5][j] == 1.0f && reference[6][j] == 1.0f;
  check.expectTrue("init: ONES gives 1 to the param and its master", ones);
}

void checkBf16(Checker &check) {
  // 1 + 2^-8 is halfway between two bf16 values: ties go to the even one.
  bool ties = floatToBf16Bits(1.00390625f) == 0x3f80 &&
              floatToBf16Bits(1.01171875f) == 0x3f82 &&
              floatToBf16Bits(-2.0f) == 0xc000;
  bool nan = std::isnan(bf16BitsToFloat(floatToBf16Bits(NAN)));
  bool half = f16BitsToFloat(0x3c00) == 1.0f &&
              f16BitsToFloat(0xc000) == -2.0f &&
              f16BitsToFloat(0x0001) == std::ldexp(1.0f, -24) &&
              std::isinf(f16BitsToFloat(0x7c00));
  check.expectTrue("bf16 rounds to nearest even, NaN stays NaN", ties && nan);
  check.expectTrue("f16 decodes normals, subnormals and infinity", half);
}

/// validateProgram's verdict on the mixed program after `change`.
std::string verdict(const Declare &change, int worldSize = 1) {
  zrt_context *ctx = createLocalContext(0, worldSize);
  declareMixed(ctx, worldSize, 0);
  change(ctx);
  std::string error = validateProgram(ctx);
  destroyContext(ctx);
  return error;
}

void expectError(Checker &check, const std::string &name, const Declare &change,
                 const std::string &expected, int worldSize = 1) {
  std::string error = verdict(change, worldSize);
  check.expectTrue("declarations: " + name,
                   error.find(expected) != std::string::npos,
                   "got '" + error + "'");
}

void arg(zrt_context *ctx, int64_t index, const char *name, int32_t role,
         int32_t dtype, int32_t rank, int64_t d0, int64_t d1 = 0,
         int32_t sharded = 0) {
  zrt_declare_arg(ctx, index, name, role, dtype, rank, d0, d1, 0, 0, sharded,
                  ZRT_INIT_ZEROS, 0);
}

void checkDeclarations(Checker &check) {
  check.expectTrue("declarations: the mixed program is valid",
                   verdict([](zrt_context *) {}).empty(),
                   verdict([](zrt_context *) {}));
  expectError(
      check, "unknown role",
      [](zrt_context *c) { arg(c, 8, "x", 42, 0, 1, 3); },
      "argument 8 ('x') has an unknown role 42");
  expectError(
      check, "unknown dtype",
      [](zrt_context *c) { arg(c, 8, "x.v", ZRT_ROLE_ADAM_V, 7, 1, 3); },
      "adam_v argument 8 ('x.v') has an unknown dtype 7 (0 is f32, 1 is bf16, "
      "2 is exact)");
  expectError(
      check, "rank above 4",
      [](zrt_context *c) { arg(c, 8, "p", ZRT_ROLE_PARAM, 0, 5, 3); },
      "param argument 8 ('p') has rank 5; ranks are 0 to 4");
  expectError(
      check, "dim past the rank",
      [](zrt_context *c) { arg(c, 8, "p", ZRT_ROLE_PARAM, 0, 1, 3, 4); },
      "param argument 8 ('p') has rank 1 but a non-zero dim1 (4)");
  expectError(
      check, "empty dim",
      [](zrt_context *c) { arg(c, 8, "p", ZRT_ROLE_PARAM, 0, 2, 3, 0); },
      "param argument 8 ('p') has dimension 1 of size 0");
  expectError(
      check, "tokens of the wrong size",
      [](zrt_context *c) { arg(c, 8, "t", ZRT_ROLE_TARGETS, 0, 2, 6, 5); },
      "targets argument 8 ('t') has shape [6, 5] (30 elements) but this "
      "rank's targets have 24 elements");
  expectError(
      check, "features in an LM program",
      [](zrt_context *c) { arg(c, 8, "x", ZRT_ROLE_FEATURES, 0, 2, 6, 4); },
      "is features data, which a language-model program has no use for");
  expectError(
      check, "sharded data",
      [](zrt_context *c) { arg(c, 8, "s", ZRT_ROLE_STEP, 0, 0, 0, 0, 1); },
      "step argument 8 ('s') is declared sharded");
  expectError(
      check, "bf16 scalar",
      [](zrt_context *c) { arg(c, 8, "n", ZRT_ROLE_MAX_NORM, 1, 0, 0); },
      "max_norm argument 8 ('n') must be one f32 element, not bf16 []");
  expectError(
      check, "bf16 moment",
      [](zrt_context *c) { arg(c, 8, "m", ZRT_ROLE_ADAM_M, 1, 1, 3); },
      "is bf16; moments, master weights and accumulators are f32");
  expectError(
      check, "duplicate param",
      [](zrt_context *c) { arg(c, 8, "bias", ZRT_ROLE_PARAM, 0, 1, 11); },
      "arguments 4 and 8 are both the param 'bias'");
  expectError(
      check, "duplicate master",
      [](zrt_context *c) { arg(c, 8, "wte", ZRT_ROLE_MASTER, 0, 2, 50, 7); },
      "arguments 3 and 8 are both the master 'wte'");
  expectError(
      check, "second lr",
      [](zrt_context *c) { arg(c, 8, "lr2", ZRT_ROLE_LR, 0, 0, 0); },
      "arguments 1 and 8 are both lr");
  expectError(
      check, "master without param",
      [](zrt_context *c) { arg(c, 8, "lost", ZRT_ROLE_MASTER, 0, 1, 3); },
      "master argument 8 ('lost') has no param of the same name");
  expectError(
      check, "master of another shape",
      [](zrt_context *c) { arg(c, 8, "bias", ZRT_ROLE_MASTER, 0, 2, 1, 11); },
      "master argument 8 ('bias') has shape [1, 11] but its param has [11]");
  expectError(
      check, "unnamed param",
      [](zrt_context *c) { arg(c, 8, "", ZRT_ROLE_PARAM, 0, 1, 3); },
      "param argument 8 ('') has no name");
  expectError(
      check, "unknown init",
      [](zrt_context *c) {
        zrt_declare_arg(c, 8, "p", ZRT_ROLE_PARAM, 0, 1, 3, 0, 0, 0, 0, 9, 0);
      },
      "param argument 8 ('p') has an unknown init 9");
  expectError(
      check, "a gap in the arguments",
      [](zrt_context *c) { arg(c, 9, "q", ZRT_ROLE_PARAM, 0, 1, 3); },
      "argument 8 was never declared");
  expectError(
      check, "unknown task", [](zrt_context *c) { c->program.task = 5; },
      "the program declares an unknown task 5");
  expectError(
      check, "classification with sequences",
      [](zrt_context *c) {
        c->program.task = ZRT_TASK_CLASSIFY;
        c->program.numFeatures = 3;
      },
      "classification needs length 1");
  // --deterministic: exact accumulators, and only they; the chunk.
  check.expectTrue(
      "declarations: a deterministic program with an exact grad_accum is "
      "valid",
      verdict([](zrt_context *c) {
        zrt_declare_deterministic(c, 3);
        arg(c, 8, "bias", ZRT_ROLE_GRAD_ACCUM, ZRT_EXACT, 1, 11);
      }).empty());
  expectError(
      check, "an exact param",
      [](zrt_context *c) { arg(c, 8, "p", ZRT_ROLE_PARAM, ZRT_EXACT, 1, 3); },
      "param argument 8 ('p') is exact (ZRT_EXACT); only gradient "
      "accumulators (grad_accum) can be");
  expectError(
      check, "an exact moment",
      [](zrt_context *c) { arg(c, 8, "x.v", ZRT_ROLE_ADAM_V, ZRT_EXACT, 1, 3); },
      "adam_v argument 8 ('x.v') is exact");
  expectError(
      check, "deterministic chunks of 0 rows",
      [](zrt_context *c) { zrt_declare_deterministic(c, 0); },
      "the program declares deterministic chunks of 0 rows; at least 1 is "
      "needed");
  expectError(
      check, "deterministic chunks that do not divide the local batch",
      [](zrt_context *c) { zrt_declare_deterministic(c, 4); },
      "deterministic chunks of 4 rows, which do not divide this rank's 6 "
      "sequences per micro-batch");
}

/// zrt_declare_host_arg (--offload=optimizer): masters and moments may live
/// on the host and are allocated there, charged to host_optimizer apart from
/// the device total; any other role, or an argument not declared before, is
/// refused.
void checkHostDeclarations(Checker &check) {
  check.expectTrue(
      "declarations: a master and a moment in host memory are valid",
      verdict([](zrt_context *c) {
        zrt_declare_host_arg(c, 3);
        zrt_declare_host_arg(c, 7);
      }).empty());
  expectError(
      check, "a parameter in host memory",
      [](zrt_context *c) { zrt_declare_host_arg(c, 4); },
      "param argument 4 ('bias') is declared in host memory "
      "(zrt_declare_host_arg); only moments and master weights can be");
  expectError(
      check, "a host argument not declared before",
      [](zrt_context *c) { zrt_declare_host_arg(c, 8); },
      "zrt_declare_host_arg names argument 8, which is not declared before "
      "it");
  zrt_context *ctx = createLocalContext(0, 2);
  declareMixed(ctx, 2, 1);
  for (int64_t index : {3, 6, 7})
    zrt_declare_host_arg(ctx, index);
  std::vector<void *> buffers = allocateArgs(ctx);
  const MemoryLedger &l = ctx->ledger;
  int64_t device = 0;
  for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
    if (!zrt_mem_category_is_host(c))
      device += l.current[c];
  // Stage 1 at 2 ranks: the host arguments hold 175, 4 and 175 elements.
  check.expectTrue("host arguments: charged to host_optimizer, apart from "
                   "the device total",
                   l.current[ZRT_MEM_HOST_OPTIMIZER] == (175 + 4 + 175) * 4 &&
                       l.currentHost == (175 + 4 + 175) * 4 &&
                       l.current[ZRT_MEM_OPTIMIZER] == 0 &&
                       device > 0 && l.currentTotal == device,
                   "host " + std::to_string(l.currentHost) + ", total " +
                       std::to_string(l.currentTotal));
  check.expectTrue("host arguments: allocated by the host allocator",
                   ctx->allocations[buffers[3]].host &&
                       ctx->allocations[buffers[7]].host &&
                       !ctx->allocations[buffers[2]].host);
  destroyContext(ctx);
}

/// zrt_declare_shard_groups at world size 6: groups of 2 and 3 ranks are
/// valid; a size that does not divide the world, 1, the world size itself,
/// a second declaration and one before zrt_declare_program are refused.
void checkShardGroupDeclarations(Checker &check) {
  bool valid = true;
  for (int64_t g : {2, 3})
    valid &= verdict([g](zrt_context *c) { zrt_declare_shard_groups(c, g); }, 6)
                 .empty();
  check.expectTrue("declarations: shard groups of 2 and of 3 at world size 6 "
                   "are valid",
                   valid);
  expectError(
      check, "shard groups that do not divide the world size",
      [](zrt_context *c) { zrt_declare_shard_groups(c, 4); },
      "the program declares shard groups of 4 ranks, which do not divide the "
      "world size 6",
      6);
  expectError(
      check, "shard groups of 1 rank",
      [](zrt_context *c) { zrt_declare_shard_groups(c, 1); },
      "the program declares shard groups of 1 rank; a shard group has at "
      "least 2 ranks (1 < G < world size 6)",
      6);
  expectError(
      check, "shard groups of the whole world",
      [](zrt_context *c) { zrt_declare_shard_groups(c, 6); },
      "the program declares shard groups of 6 ranks, the whole world size; "
      "hybrid sharding needs 1 < G < 6 (without shard groups the state is "
      "sharded over every rank)",
      6);
  expectError(
      check, "shard groups declared twice",
      [](zrt_context *c) {
        zrt_declare_shard_groups(c, 2);
        zrt_declare_shard_groups(c, 3);
      },
      "the program declares its shard groups twice (shard groups of 2 and of "
      "3 ranks)",
      6);
  zrt_context *ctx = createLocalContext(0, 6);
  zrt_declare_shard_groups(ctx, 2);
  declareMixed(ctx, 6, 3);
  std::string error = validateProgram(ctx);
  destroyContext(ctx);
  check.expectTrue("declarations: shard groups before zrt_declare_program",
                   error == "the program calls zrt_declare_shard_groups "
                            "before zrt_declare_program",
                   "got '" + error + "'");
}

/// Hybrid sharding: at world size 6 in shard groups of G (2, 3), every rank
/// holds shard r % G of ceil(numel / G) elements of every sharded tensor,
/// initialised as one rank initialises the whole tensor (so the replicas of
/// a shard hold the same values), and zrt_shard_slice cuts the same shard.
void checkShardGroupSlices(Checker &check) {
  auto reference = initialTensors(1, 0);
  bool slices = true, values = true, sliced = true;
  for (int64_t g : {2, 3})
    for (int rank = 0; rank < 6; ++rank) {
      zrt_context *ctx = createLocalContext(rank, 6);
      declareMixed(ctx, 6, 3);
      zrt_declare_shard_groups(ctx, g);
      slices &= validateProgram(ctx).empty();
      std::vector<void *> buffers = allocateArgs(ctx);
      initParams(ctx, buffers, 99);
      for (size_t i = 0; i < ctx->args.size(); ++i) {
        const ArgDesc &arg = ctx->args[i];
        if (!arg.sharded)
          continue;
        int64_t s = (arg.numel() + g - 1) / g;
        ArgSlice slice = argSlice(ctx, arg);
        slices &= slice.first == (rank % g) * s && slice.count == s;
        if (arg.role != ZRT_ROLE_MASTER || arg.dtype != ZRT_F32)
          continue;
        for (int64_t j = 0; j < s; ++j) {
          int64_t e = slice.first + j;
          float want = e < arg.numel() ? reference[i][e] : 0.0f;
          values &= ((float *)buffers[i])[j] == want;
        }
        std::vector<float> shard(s, -1.0f);
        zrt_shard_slice(ctx, ZRT_F32, reference[i].data(), shard.data(),
                        arg.numel(), s);
        for (int64_t j = 0; j < s; ++j)
          sliced &= shard[j] == ((float *)buffers[i])[j];
      }
      destroyContext(ctx);
    }
  check.expectTrue("shard groups: rank r holds shard r % G of ceil(N / G) "
                   "(G = 2, 3 at world size 6)",
                   slices);
  check.expectTrue("shard groups: every replica of a shard is initialised "
                   "as the whole tensor",
                   values);
  check.expectTrue("shard groups: zrt_shard_slice cuts shard r % G", sliced);
}

} // namespace

int main() {
  Checker check;
  checkDeclarations(check);
  checkShardGroupDeclarations(check);
  checkHostDeclarations(check);
  checkInit(check);
  checkShardGroupSlices(check);
  checkBf16(check);
  checkTokenFiles(check);
  checkTokenStreams(check);
  checkJson(check);
  checkSha256(check);
  checkSafeTensors(check);
  return check.finish();
}
