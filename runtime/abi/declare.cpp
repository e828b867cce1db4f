//===- declare.cpp - zrt_declare_program, _arg and the others -------------===//
//
// What zero_program_describe declares: the program and its step arguments.
// Declarations are only recorded here; the driver validates them all at once
// after zero_program_describe returns (core/program.cpp), so that every rank
// reaches the same verdict and can leave cleanly without MPI_Abort.
//
//===----------------------------------------------------------------------===//

#include "core/check.h"
#include "core/context.h"
#include "core/schedule_check.h"

using namespace zrt;

extern "C" void zrt_declare_program(zrt_context *ctx, int64_t abiVersion,
                                    int64_t worldSize, int64_t stage,
                                    int32_t task, int64_t globalBatch,
                                    int64_t seqLen, int64_t numFeatures,
                                    int64_t numClasses) {
  if (ctx->program.declared)
    fatal("zrt_declare_program called twice");
  ctx->program = {true,       abiVersion,  worldSize,
                  stage,      task,        globalBatch,
                  seqLen,     numFeatures, numClasses,
                  /*microBatches=*/1, /*hfConfig=*/"",
                  /*deterministic=*/false, /*chunkRows=*/0,
                  /*shardGroups=*/false, /*shardGroupSize=*/0};
}

extern "C" void zrt_declare_shard_groups(zrt_context *ctx,
                                         int64_t shardGroupSize) {
  // Recorded, not fatal: validateProgram refuses the program with the
  // other declaration errors, one line from rank 0. Before
  // zrt_declare_program the size would be overwritten; a second size would
  // replace the first.
  if (!ctx->declarationError.empty())
    return;
  if (!ctx->program.declared) {
    ctx->declarationError = "the program calls zrt_declare_shard_groups "
                            "before zrt_declare_program";
    return;
  }
  if (ctx->program.shardGroups) {
    ctx->declarationError =
        "the program declares its shard groups twice (shard groups of " +
        std::to_string(ctx->program.shardGroupSize) + " and of " +
        std::to_string(shardGroupSize) + " ranks)";
    return;
  }
  // The size is checked with the rest of the declarations (program.cpp).
  ctx->program.shardGroups = true;
  ctx->program.shardGroupSize = shardGroupSize;
}

extern "C" void zrt_declare_deterministic(zrt_context *ctx,
                                          int64_t chunkRows) {
  // zrt_declare_program would overwrite it; a second one is a compiler bug.
  if (!ctx->program.declared)
    fatal("zrt_declare_deterministic called before zrt_declare_program");
  if (ctx->program.deterministic)
    fatal("zrt_declare_deterministic called twice");
  // The chunk is checked with the rest of the declarations (program.cpp).
  ctx->program.deterministic = true;
  ctx->program.chunkRows = chunkRows;
}

extern "C" void zrt_declare_micro_batches(zrt_context *ctx,
                                          int64_t microBatches) {
  // Checked with the rest of the declarations (program.cpp).
  ctx->program.microBatches = microBatches;
}

extern "C" void zrt_declare_hf_config(zrt_context *ctx, const char *json) {
  ctx->program.hfConfig = json ? json : "";
}

extern "C" void zrt_declare_arg(zrt_context *ctx, int64_t index,
                                const char *name, int32_t role, int32_t dtype,
                                int32_t rank, int64_t dim0, int64_t dim1,
                                int64_t dim2, int64_t dim3, int32_t sharded,
                                int32_t init, float initScale) {
  // A corrupt index would make the vector below absurdly large.
  if (index < 0 || index > 1000000)
    fatal("zrt_declare_arg: argument index %lld is out of range",
          (long long)index);
  if (ctx->args.size() <= (size_t)index)
    ctx->args.resize(index + 1);
  ArgDesc &arg = ctx->args[index];
  if (arg.declared)
    fatal("zrt_declare_arg: argument %lld declared twice", (long long)index);
  arg = {true,     name ? name : "",         role,         dtype,
         rank,     {dim0, dim1, dim2, dim3}, sharded != 0, init,
         initScale};
}

extern "C" void zrt_declare_host_arg(zrt_context *ctx, int64_t index) {
  // Recorded, not fatal: validateProgram refuses it with the other
  // declaration errors (and refuses a role the host optimizer does not
  // hold).
  if (!ctx->declarationError.empty())
    return;
  if (index < 0 || (size_t)index >= ctx->args.size() ||
      !ctx->args[index].declared) {
    ctx->declarationError = "zrt_declare_host_arg names argument " +
                            std::to_string(index) +
                            ", which is not declared before it";
    return;
  }
  ctx->args[index].host = true;
}

extern "C" void zrt_declare_collective_plan(zrt_context *ctx, int64_t sequence,
                                            int64_t queuedNs,
                                            int64_t transferNs,
                                            int64_t exposedNs) {
  if (queuedNs < 0 || transferNs < 0 || exposedNs < 0)
    fatal("zrt_declare_collective_plan: collective %lld has a negative time",
          (long long)sequence);
  ctx->schedule->declare(sequence, {true, queuedNs, transferNs, exposedNs});
}
