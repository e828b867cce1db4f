//===- Passes.h - zero-opt passes and pipelines -----------------*- C++ -*-===//
#ifndef ZERO_PASSES_PASSES_H
#define ZERO_PASSES_PASSES_H

#include "dialects/nn/NNDialect.h"
#include "dialects/zero/ZeroDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace zero {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// What `zero-opt --stage=N` compiles for.
struct StageOptions {
  int64_t stage = 0;
  int64_t worldSize = 1;
  int64_t microBatches = 1; // Gradient accumulation.
  /// All-gathers started ahead (zero-schedule-overlap); -1 keeps every
  /// collective blocking.
  int64_t prefetch = 1;
  int64_t maxLiveGatherBytes = 0;
  /// zero-bucket-collectives: bytes per gradient bucket; 0 leaves every
  /// collective of its own (no unit gathers either).
  int64_t bucketBytes = 0;
  /// zero-keep-gathered (stage 3): keep these units' forward gathers for the
  /// backward; "all" alone means every unit; empty: none.
  std::vector<std::string> keepGatheredUnits;
  /// nn-fuse-epilogues: linear layers (and GELU) as one fused GEMM.
  bool fuseEpilogues = true;
  /// Stop after the lowering to runtime calls (for zero-report) instead of
  /// going on to the LLVM dialect.
  bool stopAtRuntimeCalls = false;
};

/// Adds the pipeline of one ZeRO stage, from @forward to the LLVM dialect.
void buildStagePipeline(mlir::OpPassManager &pm, const StageOptions &options);

/// Registers every zero-opt pass, the upstream passes the pipeline uses,
/// and the named pipelines
/// (`zero-stage-pipeline`).
void registerAllZeroPasses();

} // namespace zero

#endif // ZERO_PASSES_PASSES_H
