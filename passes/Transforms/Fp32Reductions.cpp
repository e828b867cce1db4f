//===- Fp32Reductions.cpp - bfloat16 gradients reduced in float32 ---------===//
//
// --reduce-dtype=fp32. A sum over ranks in bfloat16 rounds each partial
// sum to 8 bits of mantissa; in float32 it keeps what small gradients add.
// Only gradients are bfloat16 at the reductions (losses and norms are
// float32), so the rule is simply: every bfloat16 reduction is widened.
// Readers that compute in float32 take the float32 sum, so it is rounded to
// bfloat16 nowhere on its way to the optimizer.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

namespace zero {
#define GEN_PASS_DEF_FP32REDUCTIONS
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

/// The float32 tensor to reduce in place of the bfloat16 `input`: the
/// float32 value it was cast from (a local accumulator), else its cast.
static Value widen(OpBuilder &b, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  auto wide = type.clone(b.getF32Type());
  if (auto narrowed = input.getDefiningOp<nn::CastOp>())
    if (narrowed.getInput().getType() == wide)
      return narrowed.getInput();
  return nn::CastOp::create(b, input.getLoc(), wide, input);
}

/// Hands the float32 `sum` to the readers of the bfloat16 `narrow` sum.
static void replaceReaders(Value narrow, Value sum) {
  Value castBack;
  for (OpOperand &use : llvm::make_early_inc_range(narrow.getUses())) {
    Operation *reader = use.getOwner();
    auto castOp = dyn_cast<nn::CastOp>(reader);
    if (castOp && castOp.getType() == sum.getType()) {
      castOp.replaceAllUsesWith(sum);
      castOp.erase();
    } else if (isa<nn::OptimizerUpdateOpInterface, nn::SumSquaresOp>(reader)) {
      use.set(sum); // They compute in float32 from either type.
    } else {
      if (!castBack) {
        OpBuilder b(sum.getContext());
        b.setInsertionPointAfterValue(sum);
        castBack = nn::CastOp::create(b, sum.getLoc(), narrow.getType(), sum);
      }
      use.set(castBack);
    }
  }
}

namespace {
struct Fp32ReductionsPass : zero::impl::Fp32ReductionsBase<Fp32ReductionsPass> {
  void runOnOperation() override {
    if (!lookupFunction(getOperation(), kTrainStepFuncName, getArgument(),
                        "run zero-insert-collectives first"))
      return signalPassFailure();
    SmallVector<Operation *> reductions;
    for (StringRef name : {kTrainStepFuncName, kTrainApplyFuncName})
      if (auto func = getOperation().lookupSymbol<func::FuncOp>(name))
        func.walk([&](Operation *op) {
          if (isa<AllReduceOp, ReduceScatterOp>(op) &&
              getElementTypeOrSelf(op->getOperand(0)).isBF16())
            reductions.push_back(op);
        });
    for (Operation *reduction : reductions)
      widenReduction(reduction);
  }

  void widenReduction(Operation *reduction) {
    OpBuilder b(reduction);
    Value input = reduction->getOperand(0);
    Value narrow = reduction->getResult(0);
    auto resultType = cast<RankedTensorType>(narrow.getType());
    Value wideInput = widen(b, input);
    Operation *wide = b.clone(*reduction);
    wide->setOperand(0, wideInput);
    wide->getResult(0).setType(resultType.clone(b.getF32Type()));
    replaceReaders(narrow, wide->getResult(0));
    reduction->erase();
    if (Operation *def = input.getDefiningOp())
      if (isa<nn::CastOp>(def) && def->use_empty())
        def->erase(); // The accumulator's cast for the wire.
    ++numWidened;
  }
};
} // namespace
