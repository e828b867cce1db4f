//===- mlir_fuzzer.cpp - zero-opt's .mlir input through the stage pipeline ===//
//
// What `zero-opt model.mlir --stage=3 --world-size=2` does with a hand-written
// model, on any text: parse it with the dialects zero-opt registers, verify
// it, and when it verifies run the whole ZeRO stage-3 pipeline down to the
// LLVM dialect. A parse error, a verifier's diagnostic or a pass's failure is
// the right answer to bad input; a crash, an assertion, a sanitizer's report
// or a hang is a bug in a verifier or a pass (they must refuse by name what
// they cannot handle). Diagnostics are swallowed: a fuzzer prints nothing.
//
//===----------------------------------------------------------------------===//
#include "dialects/nn/NNDialect.h"
#include "dialects/zero/ZeroDialect.h"
#include "dialects/zrt/ZrtDialect.h"
#include "lib/Pipelines/Pipelines.h"
#include "tools/zero-opt/NestingDepth.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir;

namespace {
/// The dialects of zero-opt's registry (tools/zero-opt/zero-opt.cpp) and its
/// stage-3 pipeline on 2 ranks, as `--stage=3 --world-size=2` asks for it.
struct Setup {
  DialectRegistry registry;
  zero::StageOptions options;

  Setup() {
    registry.insert<zero::nn::NNDialect, zero::sharding::ZeroDialect,
                    zero::zrt::ZrtDialect, func::FuncDialect,
                    arith::ArithDialect, LLVM::LLVMDialect>();
    FailureOr<std::string> problem =
        zero::parseStageOptions("stage=3 world-size=2", options);
    if (failed(problem) || !problem->empty())
      std::abort(); // The fuzzer's own configuration is wrong.
  }
};

const Setup &setup() {
  static Setup instance;
  return instance;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  // zero-opt refuses this before parsing (MLIR's parser would overflow its
  // stack, which is not ours to fix).
  if (zero::findTooDeepNesting(text))
    return 0;
  const Setup &config = setup();
  // A context per input: nothing one input interns leaks into the next.
  MLIRContext ctx(config.registry, MLIRContext::Threading::DISABLED);
  // As zero-opt (--mlir-print-op-on-diagnostic=false): a diagnostic names
  // the op without printing it.
  ctx.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler swallow(&ctx, [](Diagnostic &) { return success(); });

  // MLIR's lexer reads up to the NUL after the buffer, which a file read by
  // zero-opt has and libFuzzer's bytes have not: the copy adds it.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir"), llvm::SMLoc());
  ParserConfig parserConfig(&ctx, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, parserConfig);
  if (!module || failed(verify(*module)))
    return 0;

  PassManager pm(&ctx);
  zero::buildStagePipeline(pm, config.options);
  (void)pm.run(*module);
  return 0;
}
