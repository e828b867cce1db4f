//===- ExactSums.cpp - order-independent sums for --deterministic ---------===//
//
// A step adds up gradients, losses and squared norms across ranks (the
// collectives) and across micro-batches (the accumulators). In floating
// point the result depends on the order, and the order depends on the world
// size and the stage. Here each of those sums becomes exact: what a chunk
// (one micro-batch of one rank) contributes is converted to 128-bit fixed
// point, integers are added in any order with the same result, and the sum
// is converted back to float32 once. Each chunk computes the same rows with
// the same kernels on the same shapes at every world size, so the whole
// step is bitwise reproducible across world sizes and stages.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace zero {
#define GEN_PASS_DEF_EXACTSUMS
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {

bool isReduction(Operation *op) {
  return isa<AllReduceOp, ReduceScatterOp>(op);
}

/// `type` with the exact accumulators' element type.
RankedTensorType exactType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.clone(IntegerType::get(type.getContext(), 128));
}

/// A zero exact accumulator shaped like `like`.
Value exactZero(OpBuilder &b, Location loc, Type like) {
  RankedTensorType type = exactType(like);
  return arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type, b.getIntegerAttr(type.getElementType(), 0)));
}

/// `value` converted to an exact accumulator (a zero plus it).
Value toExact(OpBuilder &b, Location loc, Value value) {
  Value zero = exactZero(b, loc, value.getType());
  return nn::AccumulateExactOp::create(b, loc, zero.getType(), zero, value);
}

/// Makes `reduction` sum exact accumulators: its result becomes i128, and
/// every reader of the old float result reads its nn.from_exact (returned).
nn::FromExactOp reduceExactly(Operation *reduction) {
  Value result = reduction->getResult(0);
  auto floatType = cast<RankedTensorType>(result.getType());
  result.setType(exactType(floatType));
  OpBuilder b(reduction->getContext());
  b.setInsertionPointAfter(reduction);
  auto converted = nn::FromExactOp::create(
      b, reduction->getLoc(), floatType.clone(b.getF32Type()), result);
  result.replaceAllUsesExcept(converted, converted);
  return converted;
}

struct ExactSumsPass : zero::impl::ExactSumsBase<ExactSumsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module->hasAttr(kDeterministicAttrName)) {
      module.emitError() << getArgument() << ": the sums are exact already ("
                         << kDeterministicAttrName << " is set)";
      return signalPassFailure();
    }
    step = lookupFunction(module, kTrainStepFuncName, getArgument(),
                          "run zero-accumulate-gradients first");
    if (!step)
      return signalPassFailure();
    apply = module.lookupSymbol<func::FuncOp>(kTrainApplyFuncName);
    std::optional<int64_t> chunkRows = getChunkRows();
    if (!chunkRows || failed(checkInput()))
      return signalPassFailure();

    for (func::FuncOp func : functions())
      makeNormExact(func);
    makeLossExact();
    makeAccumulatorsExact();
    for (func::FuncOp func : functions()) {
      SmallVector<Operation *> reductions;
      func.walk([&](Operation *op) {
        if (isReduction(op) &&
            !getElementTypeOrSelf(op->getOperand(0).getType()).isInteger(128))
          reductions.push_back(op);
      });
      for (Operation *reduction : reductions) {
        OpBuilder b(reduction);
        reduction->setOperand(0, exactOperand(b, reduction));
        reduceExactly(reduction);
        ++numExactReductions;
      }
      // The conversions that a second reduction of a chain made dead.
      func.walk([](nn::FromExactOp converted) {
        if (converted->use_empty())
          converted.erase();
      });
      updateFunctionType(func);
    }
    module->setAttr(kDeterministicAttrName,
                    Builder(module).getI64IntegerAttr(*chunkRows));
  }

  func::FuncOp step, apply;

  /// The exact value `reduction` sums: its input converted, or, where the
  /// input is an exact sum already converted to float (hybrid sharding's
  /// all-reduce across the replicas of a shard the group summed), that sum
  /// itself, so that the chain is rounded once, at its end.
  static Value exactOperand(OpBuilder &b, Operation *reduction) {
    Value input = reduction->getOperand(0);
    if (auto converted = input.getDefiningOp<nn::FromExactOp>())
      return converted.getInput();
    return toExact(b, reduction->getLoc(), input);
  }

  SmallVector<func::FuncOp, 2> functions() {
    SmallVector<func::FuncOp, 2> funcs{step};
    if (apply)
      funcs.push_back(apply);
    return funcs;
  }

  /// What one rank computes per micro-batch: the rows (examples, or
  /// sequences of a language model) of its data arguments.
  std::optional<int64_t> getChunkRows() {
    int64_t rowsPerItem = 1;
    if (auto seqLen = step->getAttrOfType<IntegerAttr>(kSeqLenAttrName))
      rowsPerItem = seqLen.getInt();
    for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
      auto placement =
          step.getArgAttrOfType<PlacementAttr>(i, kPlacementAttrName);
      if (!placement || placement.getRole() != Role::Data)
        continue;
      auto type = dyn_cast<RankedTensorType>(step.getArgument(i).getType());
      if (type && type.getRank() > 0 && type.getShape()[0] > 0 &&
          type.getShape()[0] % rowsPerItem == 0)
        return type.getShape()[0] / rowsPerItem;
    }
    step.emitError() << getArgument()
                     << ": @train_step has no data argument "
                        "(#zero.placement<data, sharded>) to tell the rows "
                        "of a chunk (run zero-split-batch first)";
    return std::nullopt;
  }

  /// Float32 reductions, and accumulators added to in the micro-step
  /// (reduced there, or not: mode=local) only.
  LogicalResult checkInput() {
    for (func::FuncOp func : functions()) {
      WalkResult walk = func.walk([&](Operation *op) {
        if (!isReduction(op))
          return WalkResult::advance();
        Type element = getElementTypeOrSelf(op->getOperand(0).getType());
        if (element.isF32() || element.isInteger(128))
          return WalkResult::advance();
        op->emitOpError() << "reduces " << element
                          << " values: " << getArgument()
                          << " (--deterministic) is for float32 training";
        return WalkResult::interrupt();
      });
      if (walk.wasInterrupted())
        return failure();
    }
    for (BlockArgument acc : accumulators())
      for (Operation *user : acc.getUsers()) {
        auto add = dyn_cast<nn::AddOp>(user);
        if (!add) {
          user->emitOpError()
              << "reads accumulator argument #" << acc.getArgNumber() << " in @"
              << kTrainStepFuncName << "; " << getArgument()
              << " expects only the micro-step's nn.add";
          return failure();
        }
        Value grad = add.getLhs() == acc ? add.getRhs() : add.getLhs();
        if (Operation *def = grad.getDefiningOp(); def && isReduction(def))
          return add.emitOpError()
                 << "accumulates a gradient reduced in the micro-step "
                    "(--accumulate=sharded); "
                 << getArgument()
                 << " (--deterministic) needs each rank's own gradient "
                    "accumulated (--accumulate=local)";
      }
    return success();
  }

  SmallVector<BlockArgument> accumulators() {
    SmallVector<BlockArgument> accs;
    for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
      if (!getArgString(step, i, kGradAccumAttrName).empty())
        accs.push_back(step.getArgument(i));
    return accs;
  }

  /// The squared norm of nn.clip_coefficient: one exact chain over the
  /// same gradients, all-reduced when the float one was.
  void makeNormExact(func::FuncOp func) {
    SmallVector<nn::ClipCoefficientOp> clips;
    func.walk([&](nn::ClipCoefficientOp op) { clips.push_back(op); });
    for (nn::ClipCoefficientOp clip : clips) {
      Value total = clip.getTotalSq();
      Operation *reduction = total.getDefiningOp();
      bool reduced = reduction && isa<AllReduceOp>(reduction);
      // The squares, in the order the float chain added them.
      SmallVector<nn::SumSquaresOp> squares;
      func.walk([&](nn::SumSquaresOp op) { squares.push_back(op); });
      OpBuilder b(clip);
      Location loc = clip.getLoc();
      Value acc = exactZero(b, loc, total.getType());
      for (nn::SumSquaresOp square : squares)
        acc = nn::SumSquaresExactOp::create(b, square.getLoc(), acc.getType(),
                                            acc, square.getInput(),
                                            square.getParamAttr());
      if (reduced) {
        acc = AllReduceOp::create(b, reduction->getLoc(), acc,
                                  cast<AllReduceOp>(reduction).getGroup());
        ++numExactReductions;
      }
      Value exactTotal = nn::FromExactOp::create(b, loc, total.getType(), acc);
      clip.getTotalSqMutable().assign(exactTotal);
      eraseDeadChain(total.getDefiningOp());
    }
  }

  /// Erases `op` and, transitively, the ops that fed only it.
  static void eraseDeadChain(Operation *op) {
    if (!op || !op->use_empty())
      return;
    SmallVector<Operation *> inputs;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        inputs.push_back(def);
    op->erase();
    for (Operation *input : inputs)
      if (isa<nn::AddOp, nn::SumSquaresOp, AllReduceOp>(input))
        eraseDeadChain(input);
  }

  /// The loss (the step's first result) is all-reduced exactly and returned
  /// as an exact value: the runtime adds the micro-batches' exactly too.
  void makeLossExact() {
    auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
    Value loss = ret.getOperand(0);
    Operation *reduction = loss.getDefiningOp();
    if (reduction && isa<AllReduceOp>(reduction)) {
      OpBuilder b(reduction);
      reduction->setOperand(
          0, toExact(b, reduction->getLoc(), reduction->getOperand(0)));
      nn::FromExactOp converted = reduceExactly(reduction);
      ret->setOperand(0, reduction->getResult(0));
      if (converted->use_empty())
        converted.erase();
      ++numExactReductions;
      return;
    }
    OpBuilder b(ret);
    ret->setOperand(0, toExact(b, ret.getLoc(), loss));
  }

  /// Accumulator arguments become i128: the micro-step adds into them
  /// exactly, the apply step reduces the integers and reads them converted,
  /// and returns integer zeros for them.
  void makeAccumulatorsExact() {
    for (BlockArgument acc : accumulators()) {
      unsigned index = acc.getArgNumber();
      auto floatType = cast<RankedTensorType>(acc.getType());
      acc.setType(exactType(floatType));
      for (Operation *user : llvm::make_early_inc_range(acc.getUsers())) {
        auto add = cast<nn::AddOp>(user);
        Value grad = add.getLhs() == acc ? add.getRhs() : add.getLhs();
        OpBuilder b(add);
        auto exact = nn::AccumulateExactOp::create(b, add.getLoc(),
                                                   acc.getType(), acc, grad);
        add.replaceAllUsesWith(exact.getResult());
        add.erase();
      }
      if (!apply)
        continue;
      BlockArgument applyAcc = apply.getArgument(index);
      applyAcc.setType(acc.getType());
      OpBuilder b = OpBuilder::atBlockBegin(&apply.getBody().front());
      Value converted;
      for (OpOperand &use : llvm::make_early_inc_range(applyAcc.getUses())) {
        Operation *user = use.getOwner();
        if (isReduction(user)) {
          reduceExactly(user);
          ++numExactReductions;
          continue;
        }
        if (isa<func::ReturnOp>(user))
          continue;
        if (!converted)
          converted = nn::FromExactOp::create(b, applyAcc.getLoc(), floatType,
                                              applyAcc);
        use.set(converted);
      }
      zeroExactly(index);
    }
  }

  /// The apply step's zeroed accumulator `index`: an i128 zero.
  void zeroExactly(unsigned index) {
    auto ret = cast<func::ReturnOp>(apply.getBody().front().getTerminator());
    for (OpOperand &operand : ret->getOpOperands()) {
      auto updates = apply.getResultAttrOfType<IntegerAttr>(
          operand.getOperandNumber(), kUpdatesAttrName);
      if (!updates || updates.getInt() != index)
        continue;
      Operation *old = operand.get().getDefiningOp();
      OpBuilder b(ret);
      operand.set(exactZero(b, ret.getLoc(), operand.get().getType()));
      if (old && old->use_empty())
        old->erase();
    }
  }

  static void updateFunctionType(func::FuncOp func) {
    Block &entry = func.getBody().front();
    func.setType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                   entry.getTerminator()->getOperandTypes()));
  }
};
} // namespace
