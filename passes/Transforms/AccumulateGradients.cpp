//===- AccumulateGradients.cpp - micro-steps and an optimizer step --------===//
//
// Gradient accumulation splits one training step in two functions over the
// same arguments: the micro-step (forward, backward, gradient reduction, and
// a float32 add into an accumulator) that the runtime calls once per
// micro-batch, and the apply step (clipping, AdamW, parameter casts and
// gathers) that it calls once per optimizer step. Where the gradients are
// reduced is the choice: in the micro-step (sharded: each reduced gradient
// is accumulated as it is placed) or in the apply step (local: each rank
// accumulates its own whole gradient and the accumulators are reduced once,
// which moves 1/K of the gradient traffic).
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

#include "mlir/IR/IRMapping.h"

namespace zero {
#define GEN_PASS_DEF_ACCUMULATEGRADIENTS
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {
/// The gradient accumulated (reduced when sharded, this rank's own when
/// local), and its accumulator argument.
struct Accumulator {
  Value gradient;
  unsigned argIndex;
  /// Hybrid sharding, sharded accumulation: the all-reduce over @replica
  /// that adds the shard groups' sums. The micro-steps accumulate each
  /// group's reduce-scattered shard; the apply step all-reduces the
  /// accumulator across the groups once.
  AllReduceOp acrossReplicas = nullptr;
};

struct AccumulateGradientsPass
    : zero::impl::AccumulateGradientsBase<AccumulateGradientsPass> {
  using AccumulateGradientsBase::AccumulateGradientsBase;

  void runOnOperation() override {
    if (microBatches < 1) {
      getOperation().emitError()
          << getArgument() << ": micro-batches must be at least 1, got "
          << microBatches.getValue();
      return signalPassFailure();
    }
    // @train_apply is this pass's; zero-lower-to-zrt would take one of
    // the input's for it, even when no micro-batches are accumulated.
    if (auto existing =
            getOperation().lookupSymbol<func::FuncOp>(kTrainApplyFuncName)) {
      existing.emitError() << getArgument() << ": @" << kTrainApplyFuncName
                           << " already exists";
      return signalPassFailure();
    }
    if (microBatches == 1)
      return;
    if (failed(resolveMode()))
      return signalPassFailure();
    func::FuncOp step =
        lookupFunction(getOperation(), kTrainStepFuncName, getArgument(),
                       "run zero-clip-grad-norm first");
    if (!step)
      return signalPassFailure();
    SmallVector<nn::AdamWOp> updates;
    step.walk([&](nn::AdamWOp op) { updates.push_back(op); });
    if (updates.empty()) {
      step.emitError() << getArgument() << ": @train_step has no nn.adamw";
      return signalPassFailure();
    }
    SmallVector<Accumulator> accumulators = appendAccumulators(step, updates);
    if (accumulators.size() != updates.size())
      return; // An error was reported.
    SmallVector<Operation *> applyOps = collectApplyOps(updates, accumulators);
    buildApply(step, applyOps, accumulators);
    rewriteMicroStep(step, applyOps, accumulators);
    step->setAttr(kMicroBatchesAttrName,
                  Builder(&getContext()).getI64IntegerAttr(microBatches));
  }

  bool local = false;

  LogicalResult resolveMode() {
    if (mode != "local" && mode != "sharded")
      return getOperation().emitError()
             << getArgument() << ": mode must be local or sharded, got '"
             << mode << "' (zero-opt decides --accumulate=auto before the "
             << "pipeline runs)";
    local = mode == "local";
    return success();
  }

  /// The gradient each rank computed itself, before the collective that
  /// reduces it for `update` (that collective moves to the apply step).
  static Value unreducedGradient(nn::AdamWOp update) {
    // Hybrid sharding reduces in two collectives (over @shard, then over
    // @replica); both move.
    Value gradient = update.getGrad();
    while (Operation *reduction = gradient.getDefiningOp()) {
      if (!isa<AllReduceOp, ReduceScatterOp>(reduction))
        break;
      gradient = reduction->getOperand(0);
    }
    return gradient; // Nothing to reduce when no collective was inserted.
  }

  /// One float32 accumulator argument per accumulated gradient, placed like
  /// it: a reduced shard, or a whole (reduced or local) gradient.
  SmallVector<Accumulator> appendAccumulators(func::FuncOp step,
                                              ArrayRef<nn::AdamWOp> updates) {
    Builder b(&getContext());
    SmallVector<Accumulator> accumulators;
    for (nn::AdamWOp update : updates) {
      // The float32 state: an argument, or (stages 1-2 in float32) this
      // rank's local shard of the replicated parameter argument.
      Value stateValue = update.getParam();
      if (auto slice = stateValue.getDefiningOp<LocalShardOp>())
        stateValue = slice.getInput();
      auto state = dyn_cast<BlockArgument>(stateValue);
      if (!state) {
        update.emitOpError() << "must update an argument of @train_step ("
                             << getArgument() << ")";
        signalPassFailure();
        return {};
      }
      unsigned stateIndex = state.getArgNumber();
      StringRef name = getParamName(step, stateIndex);
      if (name.empty())
        name = getArgString(step, stateIndex, kMasterAttrName);
      Value gradient = local ? unreducedGradient(update) : update.getGrad();
      AllReduceOp acrossReplicas;
      if (auto reduction = gradient.getDefiningOp<AllReduceOp>();
          !local && reduction && getShardReduction(gradient)) {
        acrossReplicas = reduction;
        gradient = reduction.getInput();
      }
      auto gradType = cast<RankedTensorType>(gradient.getType());
      // Reduce-scattered gradients are shards of the whole parameter, over
      // the group they were scattered in.
      auto scatter = gradient.getDefiningOp<ReduceScatterOp>();
      bool sharded = bool(scatter);
      FlatSymbolRefAttr shardGroup;
      if (scatter && scatter.getGroup() != kDataParallelGroup)
        shardGroup = scatter.getGroupAttr();
      Type wholeType = step.getArgument(stateIndex).getType();
      if (auto unsharded = step.getArgAttrOfType<TypeAttr>(
              stateIndex, kUnshardedTypeAttrName))
        wholeType = unsharded.getValue();
      SmallVector<NamedAttribute> attrs{
          b.getNamedAttr(kGradAccumAttrName, b.getStringAttr(name)),
          b.getNamedAttr(kPlacementAttrName,
                         PlacementAttr::get(&getContext(), Role::Grad,
                                            sharded ? Distribution::Sharded
                                                    : Distribution::Replicated,
                                            shardGroup))};
      if (sharded)
        attrs.push_back(b.getNamedAttr(
            kUnshardedTypeAttrName,
            TypeAttr::get(
                cast<RankedTensorType>(wholeType).clone(b.getF32Type()))));
      unsigned index = step.getNumArguments();
      (void)step.insertArgument(index, gradType.clone(b.getF32Type()),
                                b.getDictionaryAttr(attrs), update.getLoc());
      accumulators.push_back({gradient, index, acrossReplicas});
    }
    return accumulators;
  }

  /// The ops of the optimizer step, in block order: the updates, what
  /// computes their gradient scale from the reduced gradients, and what
  /// consumes their results before the return.
  static SmallVector<Operation *>
  collectApplyOps(ArrayRef<nn::AdamWOp> updates,
                  ArrayRef<Accumulator> accumulators) {
    DenseSet<Value> gradients;
    for (const Accumulator &acc : accumulators)
      gradients.insert(acc.gradient);
    llvm::SetVector<Operation *> apply;
    SmallVector<Operation *> worklist;
    for (nn::AdamWOp update : updates) {
      worklist.push_back(update);
      if (Value scale = update.getGradScale())
        if (Operation *def = scale.getDefiningOp())
          worklist.push_back(def);
    }
    // Backwards from the updates and their scale down to the reduced
    // gradients and the arguments (a local shard of a replicated parameter
    // belongs to the update).
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (!apply.insert(op))
        continue;
      for (Value operand : op->getOperands())
        if (!gradients.contains(operand))
          if (Operation *def = operand.getDefiningOp())
            worklist.push_back(def);
    }
    // Forwards from the updates up to the return.
    for (nn::AdamWOp update : updates)
      worklist.push_back(update);
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      for (Operation *user : op->getUsers())
        if (!isa<func::ReturnOp>(user) && apply.insert(user))
          worklist.push_back(user);
    }
    SmallVector<Operation *> ordered(apply.begin(), apply.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return ordered;
  }

  /// @train_apply: the same arguments; the optimizer ops reading the
  /// accumulators; returns the new state and zeroed accumulators.
  void buildApply(func::FuncOp step, ArrayRef<Operation *> applyOps,
                  ArrayRef<Accumulator> accumulators) {
    OpBuilder b(step);
    b.setInsertionPointAfter(step);
    auto apply =
        func::FuncOp::create(b, step.getLoc(), kTrainApplyFuncName,
                             b.getFunctionType(step.getArgumentTypes(), {}));
    apply.setAllArgAttrs(step.getAllArgAttrs());
    Block *body = apply.addEntryBlock();
    IRMapping mapping;
    for (auto [from, to] : llvm::zip(step.getArguments(), apply.getArguments()))
      mapping.map(from, to);
    b.setInsertionPointToStart(body);
    for (const Accumulator &acc : accumulators) {
      // A local accumulator is reduced as the gradient would have been: in
      // the gradient's element type (zero-fp32-reductions may widen it). A
      // sharded one is already reduced; AdamW reads float32 as it is.
      Value accumulator = apply.getArgument(acc.argIndex);
      if (local && accumulator.getType() != acc.gradient.getType())
        accumulator = nn::CastOp::create(b, acc.gradient.getLoc(),
                                         acc.gradient.getType(), accumulator);
      mapping.map(acc.gradient, accumulator);
      // The float32 accumulator is what crosses the replicas.
      if (AllReduceOp across = acc.acrossReplicas)
        mapping.map(across.getResult(),
                    AllReduceOp::create(b, across.getLoc(), accumulator,
                                        across.getGroupAttr()));
    }
    for (Operation *op : applyOps)
      if (!isa<AllReduceOp>(op) || !llvm::any_of(accumulators, [&](auto &acc) {
            return acc.acrossReplicas == op;
          }))
        b.clone(*op, mapping);

    // Results: the state the optimizer produced, then zeroed accumulators.
    auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
    SmallVector<Value> results;
    SmallVector<Attribute> updatesOf;
    for (OpOperand &operand : ret->getOpOperands())
      if (Value mapped = mapping.lookupOrNull(operand.get())) {
        results.push_back(mapped);
        updatesOf.push_back(
            step.getResultAttr(operand.getOperandNumber(), kUpdatesAttrName));
      }
    for (const Accumulator &acc : accumulators) {
      auto type =
          cast<RankedTensorType>(apply.getArgument(acc.argIndex).getType());
      results.push_back(arith::ConstantOp::create(
          b, step.getLoc(),
          DenseElementsAttr::get(type, b.getF32FloatAttr(0.0f))));
      updatesOf.push_back(b.getI64IntegerAttr(acc.argIndex));
    }
    func::ReturnOp::create(b, step.getLoc(), results);
    apply.setType(b.getFunctionType(apply.getArgumentTypes(),
                                    ValueRange(results).getTypes()));
    for (auto [i, attr] : llvm::enumerate(updatesOf))
      apply.setResultAttr(i, kUpdatesAttrName, attr);
  }

  /// @train_step keeps the loss and adds each reduced gradient into its
  /// accumulator as soon as it exists, so that the gradient dies there.
  void rewriteMicroStep(func::FuncOp step, ArrayRef<Operation *> applyOps,
                        ArrayRef<Accumulator> accumulators) {
    Block &entry = step.getBody().front();
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    SmallVector<Value> results{ret.getOperand(0)};
    OpBuilder b(step.getContext());
    for (const Accumulator &acc : accumulators) {
      b.setInsertionPointAfterValue(acc.gradient);
      Value accumulator = step.getArgument(acc.argIndex);
      Value grad = acc.gradient;
      if (grad.getType() != accumulator.getType())
        grad =
            nn::CastOp::create(b, grad.getLoc(), accumulator.getType(), grad);
      results.push_back(nn::AddOp::create(b, grad.getLoc(), accumulator, grad));
    }
    b.setInsertionPoint(ret);
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    for (Operation *op : llvm::reverse(applyOps))
      op->erase();

    step.removeResAttrsAttr();
    step.setType(b.getFunctionType(entry.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
    for (auto [i, acc] : llvm::enumerate(accumulators))
      step.setResultAttr(i + 1, kUpdatesAttrName,
                         b.getI64IntegerAttr(acc.argIndex));
  }
};
} // namespace
