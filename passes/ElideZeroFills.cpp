//===- ElideZeroFills.cpp - skip the zero-fill of overwritten buffers -----===//
//
// zrt_alloc's memory comes zero-filled: a packed bucket's padding and an
// accumulating kernel rely on it. But most temporaries of a step are the
// output of a GEMM or an elementwise kernel that writes every element
// before anything reads one, and filling them first is a pass over
// memory that buys nothing: on GPT-2 124M at stage 3 the fills were about
// 4% of the compute thread's time, more than every layer norm together.
//
// This pass marks `unfilled` each planned zrt.alloc whose first user, in
// the order the step runs, is a kernel from the table below writing the
// buffer as a whole output (directly or through a zrt.view) and not also
// reading it, or an all-gather into it (stage 3's gathered parameters, the
// largest temporaries of a step). The table holds only kernels that
// overwrite their output on every backend (cuBLAS with beta = 0, one
// thread an element, or a row); a reduction that a backend may accumulate
// into its output (a norm's parameter gradients, attention's dK and dV, an
// embedding's gradient) stays filled, as does a buffer whose first user
// copies into part of it (a bucket member).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

namespace zero {
#define GEN_PASS_DEF_ELIDEZEROFILLS
#include "passes/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// The operands `op` writes in full without reading them first; empty for
/// every op outside the table.
SmallVector<Value, 2> overwrittenOutputs(Operation *op) {
  using Outputs = SmallVector<Value, 2>;
  return llvm::TypeSwitch<Operation *, Outputs>(op)
      .Case([](zrt::MatmulOp m) { return Outputs{m.getC()}; })
      .Case([](zrt::MatmulBiasOp m) {
        Outputs outputs{m.getC()};
        if (Value pre = m.getPreActivation())
          outputs.push_back(pre);
        return outputs;
      })
      .Case([](zrt::BiasAddOp b) { return Outputs{b.getY()}; })
      .Case([](zrt::AddOp a) { return Outputs{a.getY()}; })
      .Case<zrt::ReluOp, zrt::GeluOp>(
          [](auto u) { return Outputs{u.getY()}; })
      .Case<zrt::ReluGradOp, zrt::GeluGradOp>(
          [](auto u) { return Outputs{u.getDx()}; })
      .Case([](zrt::SwigluOp s) { return Outputs{s.getY()}; })
      .Case([](zrt::SwigluGradOp s) {
        return Outputs{s.getDgate(), s.getDup()};
      })
      .Case([](zrt::CastOp c) { return Outputs{c.getDst()}; })
      // Optimizer offload's copies: the whole of `src` into `dst`, of the
      // same type.
      .Case<zrt::CopyToHostOp, zrt::CopyToDeviceOp>(
          [](auto c) { return Outputs{c.getDst()}; })
      .Case<zrt::LayerNormOp, zrt::RmsNormOp>(
          [](auto n) { return Outputs{n.getY()}; })
      .Case<zrt::LayerNormGradOp, zrt::RmsNormGradOp>(
          [](auto n) { return Outputs{n.getDx()}; })
      .Case([](zrt::RopeOp r) { return Outputs{r.getY()}; })
      .Case([](zrt::AttentionOp a) { return Outputs{a.getOut()}; })
      .Case([](zrt::EmbeddingOp e) { return Outputs{e.getOut()}; })
      .Case([](zrt::SoftmaxXentGradOp s) { return Outputs{s.getDlogits()}; })
      .Case([](zrt::SoftmaxXentFusedOp s) {
        return Outputs{s.getDlogits()};
      })
      .Case([](zrt::SliceColsOp s) { return Outputs{s.getY()}; })
      // Every rank's shard lands in the whole buffer (a padded gather
      // copies exactly the whole out of its staging), and nothing reads it
      // before the wait.
      .Case<zrt::AllGatherOp, zrt::AllGatherStartOp>(
          [](auto g) { return Outputs{g.getOutput()}; })
      .Default([](Operation *) { return Outputs{}; });
}

/// Whether the first op that touches `alloc`'s buffer writes all of it
/// without reading it.
bool firstUseOverwrites(zrt::AllocOp alloc) {
  SmallVector<Value> names = zrt::getAliases(alloc.getBuffer());
  Operation *first = nullptr;
  for (Value name : names)
    for (Operation *user : name.getUsers()) {
      if (isa<zrt::ViewOp>(user))
        continue;
      // A use in another block or region has no order against the rest.
      if (user->getBlock() != alloc->getBlock())
        return false;
      if (!first || user->isBeforeInBlock(first))
        first = user;
    }
  if (!first)
    return false;
  // Written whole, and read as no other operand (an in-place add needs the
  // buffer's contents).
  int asOutput = 0, asOperand = 0;
  for (Value output : overwrittenOutputs(first))
    asOutput += llvm::is_contained(names, output);
  for (Value operand : first->getOperands())
    asOperand += llvm::is_contained(names, operand);
  return asOutput > 0 && asOperand == asOutput;
}

struct ElideZeroFillsPass
    : zero::impl::ElideZeroFillsBase<ElideZeroFillsPass> {
  void runOnOperation() override {
    getOperation().walk([](zrt::AllocOp alloc) {
      if (alloc.getArenaOffset() && firstUseOverwrites(alloc))
        alloc.setUnfilled(true);
    });
  }
};

} // namespace
