//===- Recompute.cpp - activation recomputation per unit ------------------===//
//
// A transformer keeps every block's intermediate activations from the
// forward to the backward: at long sequences they are most of a rank's
// memory. Recomputing a block keeps only what enters and leaves it, and
// runs its forward a second time inside the backward (activation
// checkpointing: torch.utils.checkpoint, Megatron's full recompute). Here it
// is a rewrite of @train_step before anything is placed: the backward's
// readers of a unit's inner activations read clones of the ops that made
// them, placed as late as each is needed, so the buffer planner frees the
// originals as the forward goes on. The clones compute the same kernels on
// the same operands, so the losses and weights are bit for bit those of
// the program without recomputation; at stage 3 zero-insert-collectives
// then gathers the unit's parameters for the backward before its clones.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

#include "dialects/nn/NNDialect.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

namespace zero {
#define GEN_PASS_DEF_RECOMPUTE
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// A unit's part of the forward: the ops from the first reader of one of
/// its parameters up to the first op after the last reader that reads
/// another unit's parameter (so a block's closing residual add is in).
struct UnitSpan {
  unsigned firstReader = 0, lastReader = 0, end = 0;
};

struct RecomputePass : zero::impl::RecomputeBase<RecomputePass> {
  using RecomputeBase::RecomputeBase;

  /// The forward ops of @train_step in order (everything before the loss),
  /// and each op's position in the block before any clone is added.
  SmallVector<Operation *> forward;
  DenseMap<Operation *, unsigned> position;
  Operation *lossOp = nullptr;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp trainStep = lookupFunction(
        module, kTrainStepFuncName, getArgument(), "run nn-autodiff first");
    if (!trainStep || failed(readForward(trainStep)))
      return signalPassFailure();

    llvm::MapVector<StringRef, UnitSpan> spans = unitSpans(trainStep);
    FailureOr<SmallVector<StringRef>> chosen = chooseUnits(trainStep, spans);
    if (failed(chosen))
      return signalPassFailure();
    for (StringRef unit : *chosen)
      if (failed(checkUnit(trainStep, unit, spans[unit])))
        return signalPassFailure();

    int64_t recomputedOps = 0;
    for (StringRef unit : *chosen)
      recomputedOps += recomputeUnit(unit, spans[unit]);
    numRecomputedOps = recomputedOps;

    // What zero-report prints: the units and the ops run twice.
    Builder b(&getContext());
    SmallVector<NamedAttribute> record{
        b.getNamedAttr("units", b.getStrArrayAttr(*chosen)),
        b.getNamedAttr("ops", b.getI64IntegerAttr(recomputedOps))};
    module->setAttr(kRecomputeAttrName, b.getDictionaryAttr(record));
  }

  LogicalResult readForward(func::FuncOp trainStep) {
    Block &body = trainStep.getBody().front();
    Value loss = body.getTerminator()->getOperand(0);
    lossOp = loss.getDefiningOp();
    if (!lossOp)
      return trainStep.emitError()
             << getArgument() << ": the loss must be computed in @train_step";
    for (auto [index, op] : llvm::enumerate(body))
      position[&op] = index;
    for (Operation &op : body) {
      if (&op == lossOp)
        break;
      forward.push_back(&op);
    }
    return success();
  }

  bool isBackward(Operation *op) const {
    return position.lookup(op) > position.lookup(lossOp);
  }

  /// The units of the parameters `op` reads, in operand order.
  static SmallVector<StringRef> unitsRead(func::FuncOp trainStep,
                                          Operation *op) {
    SmallVector<StringRef> units;
    for (Value operand : op->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand))
        if (arg.getOwner()->getParentOp() == trainStep.getOperation())
          if (StringRef name = getParamName(trainStep, arg.getArgNumber());
              !name.empty() && !llvm::is_contained(units, getParamUnit(name)))
            units.push_back(getParamUnit(name));
    return units;
  }

  /// Every unit read in the forward, in the order its first reader runs.
  llvm::MapVector<StringRef, UnitSpan> unitSpans(func::FuncOp trainStep) {
    llvm::MapVector<StringRef, UnitSpan> spans;
    for (auto [index, op] : llvm::enumerate(forward))
      for (StringRef unit : unitsRead(trainStep, op)) {
        auto [it, inserted] = spans.try_emplace(unit, UnitSpan{});
        if (inserted)
          it->second.firstReader = index;
        it->second.lastReader = index;
      }
    for (auto &entry : spans) {
      StringRef unit = entry.first;
      UnitSpan &span = entry.second;
      span.end = span.lastReader + 1;
      while (span.end < forward.size() &&
             llvm::all_of(unitsRead(trainStep, forward[span.end]),
                          [&](StringRef other) { return other == unit; }))
        ++span.end;
    }
    return spans;
  }

  FailureOr<SmallVector<StringRef>>
  chooseUnits(func::FuncOp trainStep,
              const llvm::MapVector<StringRef, UnitSpan> &spans) {
    SmallVector<StringRef> chosen;
    if (units.size() == 1 && units.front() == "blocks") {
      for (const auto &entry : spans)
        if (isBlockUnit(entry.first))
          chosen.push_back(entry.first);
      if (chosen.empty())
        return trainStep.emitError()
               << getArgument() << ": units=blocks found no numbered unit "
               << "(a parameter name with an all-digit component, like "
                  "h.3.attn.weight) among the forward's parameters";
      return chosen;
    }
    if (units.empty())
      return trainStep.emitError()
             << getArgument() << ": no units given; name units (h.0,h.3) "
             << "or 'blocks'";
    for (const std::string &unit : units) {
      auto it = spans.find(unit);
      if (it == spans.end()) {
        InFlightDiagnostic diag = trainStep.emitError()
                                  << getArgument() << ": unit '" << unit
                                  << "' has no parameter read in the forward";
        diag << "; its units are "
             << llvm::join(llvm::make_first_range(spans), ", ");
        return diag;
      }
      if (!llvm::is_contained(chosen, it->first))
        chosen.push_back(it->first);
    }
    return chosen;
  }

  /// Refuses a unit whose parameters are read around another unit's (a
  /// tied embedding read at both ends of the model, say): recomputing it
  /// would run that other unit too; and one with an op that cannot run
  /// twice (side effects, regions).
  LogicalResult checkUnit(func::FuncOp trainStep, StringRef unit,
                          const UnitSpan &span) {
    for (unsigned i = span.firstReader; i < span.end; ++i)
      if (!isMemoryEffectFree(forward[i]) || forward[i]->getNumRegions())
        return forward[i]->emitOpError()
               << "in unit '" << unit << "' cannot be recomputed ("
               << getArgument() << " clones forward ops, which must be free "
               << "of side effects and regions)";
    for (unsigned i = span.firstReader; i <= span.lastReader; ++i)
      for (StringRef other : unitsRead(trainStep, forward[i]))
        if (other != unit)
          return forward[i]->emitOpError()
                 << "reads unit '" << other << "' between the forward's "
                 << "reads of unit '" << unit << "', so '" << unit
                 << "' is not one contiguous part of the forward and "
                 << getArgument() << " cannot recompute it";
    return success();
  }

  /// Clones the ops of `unit` whose results the backward reads, each just
  /// before its first reader, and points the backward at the clones. An op
  /// with a result read after the unit in the forward (its output) stays:
  /// it is the next unit's input and is kept anyway. Returns the clones.
  int64_t recomputeUnit(StringRef unit, const UnitSpan &span) {
    llvm::SmallPtrSet<Operation *, 32> inUnit(
        forward.begin() + span.firstReader, forward.begin() + span.end);
    auto isKept = [&](Operation *op) {
      for (Operation *user : op->getUsers())
        if (!inUnit.contains(user) && !isBackward(user))
          return true; // Read later in the forward, or by the loss.
      return false;
    };
    auto readByBackward = [&](Operation *op) {
      return llvm::any_of(op->getUsers(),
                          [&](Operation *user) { return isBackward(user); });
    };
    // The ops to run again: those the backward reads, and the unit's ops
    // they read in turn, short of what the unit keeps.
    llvm::SetVector<Operation *> rerun;
    for (unsigned i = span.firstReader; i < span.end; ++i)
      if (!isKept(forward[i]) && readByBackward(forward[i]))
        rerun.insert(forward[i]);
    for (unsigned i = 0; i < rerun.size(); ++i)
      for (Value operand : rerun[i]->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && inUnit.contains(def) && !isKept(def))
          rerun.insert(def);
    SmallVector<Operation *> ordered = rerun.takeVector();
    llvm::sort(ordered, [&](Operation *a, Operation *b) {
      return position.lookup(a) < position.lookup(b);
    });

    // As late as possible: before the first backward reader of the op or of
    // a clone that reads it (dependents come later, so go backwards).
    DenseMap<Operation *, Operation *> insertBefore;
    for (Operation *op : llvm::reverse(ordered)) {
      Operation *at = nullptr;
      auto consider = [&](Operation *candidate) {
        if (!at || position.lookup(candidate) < position.lookup(at))
          at = candidate;
      };
      for (Operation *user : op->getUsers()) {
        if (isBackward(user))
          consider(user);
        else if (Operation *dependent = insertBefore.lookup(user))
          consider(dependent);
      }
      insertBefore[op] = at;
    }

    IRMapping clones;
    OpBuilder b(&getContext());
    StringAttr unitName = b.getStringAttr(unit);
    for (Operation *op : ordered) {
      b.setInsertionPoint(insertBefore[op]);
      Operation *clone = b.clone(*op, clones);
      clone->setAttr(kRecomputedAttrName, unitName);
      for (auto [original, copy] :
           llvm::zip(op->getResults(), clone->getResults()))
        original.replaceUsesWithIf(
            copy, [&](OpOperand &use) { return isBackward(use.getOwner()); });
    }
    return ordered.size();
  }
};

} // namespace
