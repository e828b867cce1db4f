//===- Autodiff.cpp - reverse-mode differentiation of @forward ------------===//
//
// One generic pass: walks the forward ops in reverse and asks each for its
// vector-Jacobian product through nn::DifferentiableOpInterface.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

namespace zero {
#define GEN_PASS_DEF_AUTODIFF
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

/// A splat constant of `type` holding `value`.
static Value splatConstant(OpBuilder &b, Location loc, Type type, float value) {
  auto tensorType = cast<RankedTensorType>(type);
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(tensorType, b.getF32FloatAttr(value)));
}

namespace {
/// Gradients of the loss with respect to values seen so far, summed over
/// uses as the reverse walk meets them.
class GradientMap {
public:
  void accumulate(OpBuilder &b, Location loc, Value value, Value grad) {
    auto [it, inserted] = grads.try_emplace(value, grad);
    if (!inserted)
      it->second = nn::AddOp::create(b, loc, it->second, grad);
  }
  Value lookup(Value value) const { return grads.lookup(value); }

private:
  DenseMap<Value, Value> grads;
};

struct AutodiffPass : zero::impl::AutodiffBase<AutodiffPass> {
  void runOnOperation() override {
    func::FuncOp func = lookupFunction(getOperation(), kForwardFuncName,
                                       getArgument(), "the model's forward");
    if (!func || failed(verifySignature(func)) || failed(differentiate(func)))
      return signalPassFailure();
  }

  LogicalResult verifySignature(func::FuncOp func) {
    FunctionType type = func.getFunctionType();
    auto loss = type.getNumResults() == 1
                    ? dyn_cast<RankedTensorType>(type.getResult(0))
                    : RankedTensorType();
    if (!loss || loss.getRank() != 0 || !loss.getElementType().isF32())
      return func.emitError() << getArgument()
                              << ": @forward must return one scalar loss "
                                 "(tensor<f32>), got "
                              << type.getResults();
    if (!func.getBody().hasOneBlock())
      return func.emitError()
             << getArgument() << ": @forward must be a single block";
    return success();
  }

  LogicalResult differentiate(func::FuncOp func) {
    Block &entry = func.getBody().front();
    Operation *terminator = entry.getTerminator();
    Value loss = terminator->getOperand(0);
    SmallVector<Operation *> forwardOps;
    for (Operation &op : entry.without_terminator())
      forwardOps.push_back(&op);

    OpBuilder b(terminator);
    GradientMap grads;
    grads.accumulate(b, func.getLoc(), loss,
                     splatConstant(b, func.getLoc(), loss.getType(), 1.0f));
    for (Operation *op : llvm::reverse(forwardOps))
      if (failed(backpropagate(b, op, grads)))
        return failure();

    // Results: the loss, then d loss / d param for every parameter.
    SmallVector<Value> results{loss};
    SmallVector<unsigned> paramIndices;
    for (BlockArgument arg : entry.getArguments()) {
      if (getParamName(func, arg.getArgNumber()).empty())
        continue;
      Value grad = grads.lookup(arg);
      if (!grad) // The loss does not depend on this parameter.
        grad = splatConstant(b, arg.getLoc(), arg.getType(), 0.0f);
      results.push_back(grad);
      paramIndices.push_back(arg.getArgNumber());
    }
    func::ReturnOp::create(b, terminator->getLoc(), results);
    terminator->erase();
    numBackwardOps = entry.getOperations().size() - forwardOps.size() - 1;
    eraseDeadOps(entry);

    func.setSymName(kTrainStepFuncName);
    func.setType(FunctionType::get(&getContext(), entry.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
    for (auto [i, argIndex] : llvm::enumerate(paramIndices))
      func.setResultAttr(i + 1, kGradOfAttrName, b.getI64IntegerAttr(argIndex));
    return success();
  }

  /// Drops what no result needs, such as the gradient of the input batch.
  static void eraseDeadOps(Block &block) {
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op))
        op->erase();
  }

  /// Emits the gradient of `op`'s operands, if the loss depends on `op`.
  LogicalResult backpropagate(OpBuilder &b, Operation *op, GradientMap &grads) {
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults())
      resultGrads.push_back(grads.lookup(result));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      return success(); // Not on a path to the loss.
    auto differentiable = dyn_cast<nn::DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitOpError()
             << "has no gradient rule, but the loss depends on it ("
             << getArgument() << ")";
    for (auto [grad, result] : llvm::zip(resultGrads, op->getResults()))
      if (!grad)
        grad = splatConstant(b, op->getLoc(), result.getType(), 0.0f);
    SmallVector<Value> operandGrads =
        differentiable.buildGradients(b, resultGrads);
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      if (grad)
        grads.accumulate(b, op->getLoc(), operand, grad);
    return success();
  }
};
} // namespace
