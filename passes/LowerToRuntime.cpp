//===- LowerToRuntime.cpp - @train_step on tensors to zrt on buffers ------===//
//
// Turns the tensor program into the zrt program: @zero_program_describe,
// which declares the program and its arguments to the runtime, and
// @zero_program_step (and @zero_program_apply under gradient accumulation),
// in which every tensor is a buffer and every op a zrt op. This file holds
// the buffer assignment (StepLowering.h); the ops are lowered by the
// pattern families of LowerKernels.cpp and LowerCollectives.cpp.
//
//===----------------------------------------------------------------------===//
#include "passes/PassUtils.h"
#include "passes/Passes.h"
#include "passes/ProgramDescription.h"
#include "passes/StepLowering.h"

namespace zero {
#define GEN_PASS_DEF_LOWERTORUNTIME
#include "passes/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

MemRefType zero::getBufferType(Type tensorType) {
  auto tensor = cast<RankedTensorType>(tensorType);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// The gradient that `add` adds into an accumulator argument (a micro-step
/// of zero-accumulate-gradients), into `gradients`.
static void addedToAccumulator(Operation *add, DenseSet<Value> &gradients) {
  auto func = add->getParentOfType<func::FuncOp>();
  for (auto [i, operand] : llvm::enumerate(add->getOperands())) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (arg &&
        !getArgString(func, arg.getArgNumber(), kGradAccumAttrName).empty())
      gradients.insert(add->getOperand(1 - i));
  }
}

void StepLowering::analyse() {
  Block &entry = tensorFunc.getBody().front();
  for (auto [index, op] : llvm::enumerate(entry)) {
    positions[&op] = index;
    for (Value operand : op.getOperands())
      lastUse[operand] = index;
  }
  // An asynchronous collective reads its input until its wait.
  for (Operation &op : entry)
    if (isa<AllGatherStartOp, ReduceScatterStartOp, AllReduceStartOp>(op)) {
      unsigned waitAt = positions[*op.getResult(0).getUsers().begin()];
      for (Value operand : op.getOperands())
        lastUse[operand] = std::max(lastUse[operand], waitAt);
    }
  // In program order, not the map's (which follows pointer values): values
  // that die together are then freed in the same order on every run, and
  // the compiled program is the same every time.
  DenseSet<Value> listed;
  for (Operation &op : entry)
    for (Value operand : op.getOperands())
      if (listed.insert(operand).second)
        deaths[lastUse[operand]].push_back(operand);
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i)
    if (auto updates =
            tensorFunc.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttrName))
      destinations[ret.getOperand(i)] =
          tensorFunc.getArgument(updates.getInt());
  tensorFunc.walk([&](Operation *op) {
    if (auto update = dyn_cast<nn::AdamWOp>(op))
      gradients.insert(update.getGrad());
    else if (isa<ReduceScatterOp, ReduceScatterStartOp>(op))
      gradients.insert(op->getOperand(0));
    else if (isa<nn::AddOp>(op))
      addedToAccumulator(op, gradients);
  });
  // Back from what AdamW reads or an accumulator adds: an all-reduced
  // gradient (stage 0) is a gradient before its reduction, a cast one (for
  // an accumulator, or widened for the wire) before its cast, and a
  // bucket's members are gradients (the packed bucket itself is
  // communication staging).
  auto isGradient = [&](Value v) { return gradients.contains(v); };
  for (Operation &op : llvm::reverse(entry)) {
    if (auto castOp = dyn_cast<nn::CastOp>(op)) {
      if (isGradient(castOp.getResult()))
        gradients.insert(castOp.getInput());
    } else if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      if (isGradient(reduce.getResult()))
        gradients.insert(reduce.getInput());
    } else if (auto start = dyn_cast<AllReduceStartOp>(op)) {
      if (isGradient(start.getWait().getResult()))
        gradients.insert(start.getInput());
    } else if (auto unpack = dyn_cast<UnpackOp>(op)) {
      if (llvm::any_of(unpack.getResults(), isGradient))
        gradients.insert(unpack.getInput());
    } else if (auto pack = dyn_cast<PackOp>(op)) {
      if (isGradient(pack.getResult()))
        gradients.insert(pack.getInputs().begin(), pack.getInputs().end());
    }
  }
}

Value StepLowering::typedAs(Value buffer, Value tensor) {
  MemRefType type = getBufferType(tensor.getType());
  if (buffer.getType() == type)
    return buffer;
  return zrt::ViewOp::create(b, tensor.getLoc(), type, buffer);
}

Value StepLowering::bufferFor(Value result, zrt::MemCategory category,
                              Value inPlaceOperand,
                              std::optional<unsigned> operandDiesAt) {
  unsigned dies = operandDiesAt.value_or(position);
  if (Value dest = destinations.lookup(result)) {
    auto it = lastUse.find(dest);
    bool deadBefore = it == lastUse.end() || it->second < position;
    bool dyingHere = it != lastUse.end() && it->second == dies &&
                     inPlaceOperand == dest;
    if (deadBefore || dyingHere)
      return buffers[result] = typedAs(buf(dest), result);
  }
  // Reuse keeps the allocation's ledger category, so only a buffer of the
  // same category is reused: the runtime's ledger stays exact.
  if (inPlaceOperand && owned.contains(inPlaceOperand) &&
      lastUse.lookup(inPlaceOperand) == dies &&
      getByteSize(inPlaceOperand.getType()) == getByteSize(result.getType()) &&
      categories.lookup(inPlaceOperand) == category) {
    owned.remove(inPlaceOperand);
    owned.insert(result);
    categories[result] = category;
    return buffers[result] = typedAs(buf(inPlaceOperand), result);
  }
  owned.insert(result);
  categories[result] = category;
  return buffers[result] =
             zrt::AllocOp::create(b, result.getLoc(),
                                  getBufferType(result.getType()), category,
                                  /*arena_offset=*/nullptr);
}

void StepLowering::freeDeadValues(Operation *op) {
  // What dies here: this op's last operands, and the inputs of collectives
  // whose wait this is (their last use was moved to the wait).
  llvm::SmallSetVector<Value, 4> dying;
  for (Value value : deaths.lookup(position))
    dying.insert(value);
  for (Value result : op->getResults())
    if (result.use_empty())
      dying.insert(result);
  for (Value value : dying)
    if (owned.remove(value))
      zrt::FreeOp::create(b, op->getLoc(), buf(value));
}

/// Results that update an argument go to its buffer; the one result that
/// does not is the loss (absent from the optimizer step of gradient
/// accumulation), copied to `lossOut`.
void StepLowering::lowerReturn(func::ReturnOp ret, Value lossOut) {
  for (Value value : ret.getOperands()) {
    Value dest = destinations.lookup(value);
    Value target = dest ? buf(dest) : lossOut;
    if (buf(value) != target)
      zrt::CopyOp::create(b, ret.getLoc(), buf(value), target,
                          getByteSize(value.getType()), /*src_offset=*/0,
                          /*dst_offset=*/0);
  }
}

LogicalResult StepLowering::lower(Block &bufferBody, Value lossOut) {
  analyse();
  for (BlockArgument arg : tensorFunc.getArguments())
    buffers[arg] = bufferBody.getArgument(arg.getArgNumber());
  for (Operation &op : tensorFunc.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      lowerReturn(ret, lossOut);
    } else {
      std::optional<LogicalResult> lowered = lowerKernelOp(*this, &op);
      if (!lowered)
        lowered = lowerShardingOp(*this, &op);
      if (!lowered)
        return op.emitOpError("cannot be lowered to the runtime: no zrt "
                              "kernel implements it");
      if (failed(*lowered))
        return failure();
    }
    freeDeadValues(&op);
    ++position;
  }
  return success();
}

namespace {
struct LowerToRuntimePass
    : zero::impl::LowerToRuntimeBase<LowerToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp trainStep = lookupFunction(
        module, kTrainStepFuncName, getArgument(),
        "run zero-insert-collectives first");
    if (!trainStep || failed(emitProgramDescription(trainStep, getArgument())))
      return signalPassFailure();
    // Without gradient accumulation the optimizer runs inside the step and
    // the apply function the runtime calls after each step is empty.
    auto trainApply = module.lookupSymbol<func::FuncOp>(kTrainApplyFuncName);
    // The forward-only step of validation (zero-extract-eval), when present.
    auto evalStep = module.lookupSymbol<func::FuncOp>(kEvalStepFuncName);
    for (func::FuncOp optional : {trainApply, evalStep})
      if (optional && optional.isExternal()) {
        optional.emitError() << getArgument() << ": @" << optional.getName()
                             << " is a declaration; expected a func.func "
                                "with a body";
        return signalPassFailure();
      }
    if (failed(emitEntry(trainStep, trainStep, "zero_program_step",
                         /*withLoss=*/true)) ||
        failed(emitEntry(trainApply, trainStep, "zero_program_apply",
                         /*withLoss=*/false)) ||
        (evalStep && failed(emitEntry(evalStep, trainStep, "zero_program_eval",
                                      /*withLoss=*/true))))
      return signalPassFailure();
    for (func::FuncOp lowered : {trainStep, trainApply, evalStep})
      if (lowered)
        lowered.erase();
    // zrt.declare_program now states the world size and stage.
    if (sharding::GroupOp group = sharding::getDataParallelGroup(module))
      group.erase();
  }

  /// @name(%buffers..., [%loss]) running `body`, whose arguments are the
  /// step's; when `body` is null, an empty function of `signature`'s.
  LogicalResult emitEntry(func::FuncOp body, func::FuncOp signature,
                          StringRef name, bool withLoss) {
    ModuleOp module = getOperation();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> argTypes;
    for (Type type : (body ? body : signature).getArgumentTypes())
      argTypes.push_back(getBufferType(type));
    if (withLoss)
      argTypes.push_back(MemRefType::get({}, b.getF32Type()));
    Location loc = body ? body.getLoc() : module.getLoc();
    auto entry =
        func::FuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
    if (withLoss)
      entry.setArgAttr(argTypes.size() - 1, zrt::kLossAttrName,
                       b.getUnitAttr());
    Block *block = entry.addEntryBlock();
    b.setInsertionPointToStart(block);
    if (body) {
      StepLowering lowering(body, b);
      if (failed(lowering.lower(*block, withLoss ? block->getArguments().back()
                                                 : Value())))
        return failure();
    }
    func::ReturnOp::create(b, loc);
    return success();
  }
};
} // namespace
