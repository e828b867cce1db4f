//===- ExtractEval.cpp - the forward-only step for validation -------------===//
//
// A validation loss needs the forward of the training step and nothing
// after it. Rather than build a second forward, this pass copies the
// finished micro-step and keeps the backward slice of its loss: the same
// ops, collectives and placements, so the validation loss is the loss the
// training step would compute on the same batch, bit for bit.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

#include "mlir/Analysis/SliceAnalysis.h"

namespace zero {
#define GEN_PASS_DEF_EXTRACTEVAL
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {
struct ExtractEvalPass : zero::impl::ExtractEvalBase<ExtractEvalPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step =
        lookupFunction(module, kTrainStepFuncName, getArgument(),
                       "run zero-accumulate-gradients first");
    if (!step)
      return signalPassFailure();
    if (Operation *existing = module.lookupSymbol(kEvalStepFuncName)) {
      existing->emitError()
          << getArgument() << ": @" << kEvalStepFuncName << " already exists";
      return signalPassFailure();
    }
    auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
    if (ret.getNumOperands() == 0 ||
        !isa<RankedTensorType>(ret.getOperand(0).getType()) ||
        cast<RankedTensorType>(ret.getOperand(0).getType()).getRank() != 0) {
      ret.emitError() << getArgument()
                      << ": @train_step's first result must be its scalar loss";
      return signalPassFailure();
    }
    if (llvm::any_of(step.getBody().front().without_terminator(),
                     [](Operation &op) { return op.getNumRegions() != 0; })) {
      step.emitError() << getArgument()
                       << ": @train_step must be one block of ops without "
                          "regions";
      return signalPassFailure();
    }

    auto eval = cast<func::FuncOp>(step->clone());
    eval.setSymName(kEvalStepFuncName);
    module.insert(std::next(Block::iterator(step)), eval);
    keepOnlyTheLoss(eval);
  }

  /// Erases every op of `eval` the loss does not depend on and returns the
  /// loss alone.
  static void keepOnlyTheLoss(func::FuncOp eval) {
    Block &body = eval.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value loss = ret.getOperand(0);
    SetVector<Operation *> needed;
    if (Operation *producer = loss.getDefiningOp()) {
      BackwardSliceOptions options;
      options.inclusive = true;
      (void)getBackwardSlice(producer, &needed, options);
    }
    OpBuilder b(ret);
    func::ReturnOp::create(b, ret.getLoc(), loss);
    ret.erase();
    // Last first, so that every use of an op is gone before the op.
    SmallVector<Operation *> unneeded;
    for (Operation &op : body.without_terminator())
      if (!needed.contains(&op))
        unneeded.push_back(&op);
    for (Operation *op : llvm::reverse(unneeded))
      op->erase();
    eval.removeResAttrsAttr();
    eval.setType(FunctionType::get(eval.getContext(), eval.getArgumentTypes(),
                                   {loss.getType()}));
  }
};
} // namespace
