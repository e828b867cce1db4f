//===- Passes.h - zero-opt passes and pipelines -----------------*- C++ -*-===//
#ifndef ZERO_PASSES_PASSES_H
#define ZERO_PASSES_PASSES_H

#include "dialects/nn/NNDialect.h"
#include "dialects/zero/ZeroDialect.h"
#include "dialects/zrt/ZrtDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>
#include <vector>

namespace zero {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Every option of the stage pipeline, declared once. The registered
/// pipeline `zero-stage-pipeline{...}` parses it; `zero-opt --stage=N` fills
/// it from its flags and runs the pipeline through its textual form, which
/// `--print-pipeline` prints, so `--pass-pipeline=` with that text runs
/// exactly what `--stage` does.
struct StageOptions : public mlir::PassPipelineOptions<StageOptions> {
  Option<int64_t> stage{*this, "stage", llvm::cl::desc("ZeRO stage (0-3)"),
                        llvm::cl::init(0)};
  Option<int64_t> worldSize{*this, "world-size",
                            llvm::cl::desc("Number of data-parallel ranks"),
                            llvm::cl::init(1)};
  Option<int64_t> microBatches{
      *this, "micro-batches",
      llvm::cl::desc("Micro-batches accumulated per optimizer step "
                     "(zero-accumulate-gradients)"),
      llvm::cl::init(1)};
  Option<int64_t> prefetch{
      *this, "prefetch",
      llvm::cl::desc("zero-schedule-overlap: stage-3 all-gathers started "
                     "ahead; -1 keeps every collective blocking"),
      llvm::cl::init(1)};
  Option<int64_t> maxLiveGatherBytes{
      *this, "max-live-gather-bytes",
      llvm::cl::desc("zero-schedule-overlap: cap on gathered bytes in flight "
                     "(0: none)"),
      llvm::cl::init(0)};
  Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("zero-bucket-collectives: bytes per gradient bucket; 0 "
                     "leaves every collective of its own"),
      llvm::cl::init(0)};
  ListOption<std::string> keepGatheredUnits{
      *this, "keep-gathered",
      llvm::cl::desc("zero-keep-gathered (stage 3): units whose forward "
                     "gathers the backward reads; 'all' alone: every unit")};
  Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("nn-fuse-epilogues: linear layers (and GELU) as one "
                     "fused GEMM"),
      llvm::cl::init(true)};
  Option<bool> stopAtZrt{
      *this, "stop-at-zrt",
      llvm::cl::desc("Stop at the planned zrt program (for zero-report) "
                     "instead of going on to the LLVM dialect"),
      llvm::cl::init(false)};
};

/// Adds the pipeline of one ZeRO stage, from @forward to the LLVM dialect.
void buildStagePipeline(mlir::OpPassManager &pm, const StageOptions &options);

/// Registers every zero-opt pass, the upstream passes the pipeline uses,
/// and the named pipeline `zero-stage-pipeline{...}` (StageOptions).
void registerAllZeroPasses();

} // namespace zero

#endif // ZERO_PASSES_PASSES_H
