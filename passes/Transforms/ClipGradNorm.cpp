//===- ClipGradNorm.cpp - global-norm gradient clipping -------------------===//
//
// torch.nn.utils.clip_grad_norm_ over sharded gradients: each rank sums the
// squares of the gradient elements it holds, the ranks add their sums when
// the gradients are shards, and every update is scaled by one coefficient.
// Shard padding is zero, so it adds nothing to the norm.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

namespace zero {
#define GEN_PASS_DEF_CLIPGRADNORM
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {
struct ClipGradNormPass : zero::impl::ClipGradNormBase<ClipGradNormPass> {
  void runOnOperation() override {
    func::FuncOp func =
        lookupFunction(getOperation(), kTrainStepFuncName, getArgument(),
                       "run zero-insert-collectives first");
    if (!func)
      return signalPassFailure();
    SmallVector<nn::AdamWOp> updates;
    func.walk([&](nn::AdamWOp op) { updates.push_back(op); });
    if (updates.empty()) {
      func.emitError() << getArgument() << ": @train_step has no nn.adamw";
      return signalPassFailure();
    }
    Value maxNorm = appendMaxNormArgument(func);
    Operation *terminator = func.getBody().front().getTerminator();
    OpBuilder b(terminator);
    Value scale = buildCoefficient(b, func, updates, maxNorm);
    for (nn::AdamWOp update : updates)
      update.getGradScaleMutable().assign(scale);
    moveUpdatesAfter(scale.getDefiningOp(), updates);
  }

  Value appendMaxNormArgument(func::FuncOp func) {
    Builder b(&getContext());
    unsigned index = func.getNumArguments();
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr(kHyperAttrName, b.getStringAttr("max_norm")),
        b.getNamedAttr(kPlacementAttrName,
                       PlacementAttr::get(&getContext(), Role::Hyper,
                                          Distribution::Replicated,
                                          FlatSymbolRefAttr()))};
    (void)func.insertArgument(index, scalar, b.getDictionaryAttr(attrs),
                              func.getLoc());
    return func.getArgument(index);
  }

  /// The scale of every gradient, from the squared norm of all of them.
  Value buildCoefficient(OpBuilder &b, func::FuncOp func,
                         ArrayRef<nn::AdamWOp> updates, Value maxNorm) {
    Location loc = func.getLoc();
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Value total;
    // The group the gradients are sharded over, if they are: each of its
    // ranks holds a different part of the norm (with hybrid sharding, every
    // shard group holds all of it).
    FlatSymbolRefAttr shardGroup;
    for (nn::AdamWOp update : updates) {
      // The moments are arguments named after the parameter whatever
      // precision and stage (the parameter may be a master or a shard).
      auto moment = cast<BlockArgument>(update.getExpAvg());
      StringRef name =
          getArgString(func, moment.getArgNumber(), kAdamMAttrName);
      Value squares = nn::SumSquaresOp::create(
          b, loc, scalar, update.getGrad(),
          name.empty() ? StringAttr() : b.getStringAttr(name));
      total = total ? nn::AddOp::create(b, loc, total, squares) : squares;
      if (Operation *reduction = getShardReduction(update.getGrad()))
        shardGroup = cast<ReduceScatterOp>(reduction).getGroupAttr();
    }
    if (shardGroup)
      total = AllReduceOp::create(b, withCollectiveLabel(loc, "gradient norm"),
                                  total, shardGroup);
    return nn::ClipCoefficientOp::create(b, loc, total, maxNorm);
  }

  /// The updates, and what consumes their results before the return, must
  /// follow the coefficient, which needs every gradient.
  static void moveUpdatesAfter(Operation *anchor,
                               ArrayRef<nn::AdamWOp> updates) {
    llvm::SetVector<Operation *> toMove;
    SmallVector<Operation *> worklist(updates.begin(), updates.end());
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (isa<func::ReturnOp>(op) || !toMove.insert(op))
        continue;
      for (Operation *user : op->getUsers())
        worklist.push_back(user);
    }
    SmallVector<Operation *> ordered(toMove.begin(), toMove.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    Operation *insertAfter = anchor;
    for (Operation *op : ordered) {
      op->moveAfter(insertAfter);
      insertAfter = op;
    }
  }
};
} // namespace
