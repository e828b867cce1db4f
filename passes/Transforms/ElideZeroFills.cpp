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
// the order the step runs, writes the buffer whole without reading it
// (directly or through a zrt.view): an operand the op declares `Zrt_Out`
// (ZrtOps.td), which it asks through MemoryEffectOpInterface, and no
// operand of that op reads the buffer. Ops declare `Zrt_Out` only where
// every backend overwrites (cuBLAS with beta = 0, one thread an element,
// or a row); a reduction that a backend may accumulate into its output (a
// norm's parameter gradients, attention's dK and dV, an embedding's
// gradient) is `Zrt_InOut` and stays filled, as does a buffer whose first
// user copies into part of it (a bucket member).
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace zero {
#define GEN_PASS_DEF_ELIDEZEROFILLS
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

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
  // Written, and read through no operand (an in-place add needs the
  // buffer's contents).
  auto effects = dyn_cast<MemoryEffectOpInterface>(first);
  if (!effects)
    return false;
  bool written = false, read = false;
  for (Value name : names) {
    SmallVector<MemoryEffects::EffectInstance> onName;
    effects.getEffectsOnValue(name, onName);
    for (const MemoryEffects::EffectInstance &effect : onName) {
      written |= isa<MemoryEffects::Write>(effect.getEffect());
      read |= !isa<MemoryEffects::Write>(effect.getEffect());
    }
  }
  return written && !read;
}

struct ElideZeroFillsPass : zero::impl::ElideZeroFillsBase<ElideZeroFillsPass> {
  void runOnOperation() override {
    getOperation().walk([](zrt::AllocOp alloc) {
      if (alloc.getArenaOffset() && firstUseOverwrites(alloc))
        alloc.setUnfilled(true);
    });
  }
};

} // namespace
