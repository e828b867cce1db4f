//===- FuseEpilogues.cpp - matmul + bias (+ GELU) as one op ---------------===//
//
// Runs on the whole training graph (after autodiff and AdamW), so the
// backward already exists in terms of the unfused ops: fusing changes which
// kernels run, never which gradients are computed. Only forward linear
// layers match: autodiff's gradient GEMMs have no bias.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"

namespace zero {
#define GEN_PASS_DEF_FUSEEPILOGUES
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// The first `nn.gelu` (in block order) that reads `value` in `block`.
nn::GeluOp firstGeluOf(Value value, Block *block) {
  nn::GeluOp first;
  for (Operation *user : value.getUsers()) {
    auto gelu = dyn_cast<nn::GeluOp>(user);
    if (gelu && gelu->getBlock() == block &&
        (!first || gelu->isBeforeInBlock(first)))
      first = gelu;
  }
  return first;
}

struct FuseEpiloguesPass : zero::impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    SmallVector<nn::BiasAddOp> sums;
    getOperation().walk([&](nn::BiasAddOp sum) { sums.push_back(sum); });
    for (nn::BiasAddOp sum : sums)
      fuse(sum);
  }

  void fuse(nn::BiasAddOp sum) {
    auto matmul = sum.getInput().getDefiningOp<nn::MatmulOp>();
    // The product must die in the sum: a fused GEMM never writes it.
    if (!matmul || !matmul->hasOneUse() ||
        matmul->getBlock() != sum->getBlock())
      return;
    OpBuilder b(sum);
    nn::GeluOp gelu = firstGeluOf(sum.getResult(), sum->getBlock());
    if (!gelu) {
      auto fused = nn::MatmulBiasOp::create(
          b, b.getFusedLoc({matmul.getLoc(), sum.getLoc()}), sum.getType(),
          matmul.getLhs(), matmul.getRhs(), sum.getBias(),
          matmul.getTransposeLhs(), matmul.getTransposeRhs());
      sum.replaceAllUsesWith(fused.getResult());
    } else {
      // Placed at the sum, before the GELU it replaces: its operands are
      // all defined there, and the GELU's users all come after it.
      auto fused = nn::MatmulBiasGeluOp::create(
          b, b.getFusedLoc({matmul.getLoc(), sum.getLoc(), gelu.getLoc()}),
          sum.getType(), sum.getType(), matmul.getLhs(), matmul.getRhs(),
          sum.getBias(), matmul.getTransposeLhs(), matmul.getTransposeRhs());
      gelu.replaceAllUsesWith(fused.getResult());
      gelu->erase();
      sum.replaceAllUsesWith(fused.getPreActivation());
    }
    sum->erase();
    matmul->erase();
  }
};

} // namespace
