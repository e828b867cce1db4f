//===- ZeroToZrt.cpp - @train_step on tensors to zrt on buffers -----------===//
//
// Turns the tensor program into the zrt program: @zero_program_describe,
// which declares the program and its arguments to the runtime, and
// @zero_program_step (and @zero_program_apply under gradient accumulation,
// @zero_program_eval with validation), in which every tensor is a buffer and
// every op a zrt op. Each function is one dialect conversion
// (StepLowering.h): this file holds the buffer assignment, the type
// converter and the patterns of the function itself (its signature and its
// return); the ops are lowered by the pattern families of LowerKernels.cpp
// and LowerCollectives.cpp.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/ZeroToZrt/ZeroToZrt.h"
#include "passes/Conversion/ZeroToZrt/Passes.h"
#include "passes/Conversion/ZeroToZrt/ProgramDescription.h"
#include "passes/Utils/PassUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace zero {
#define GEN_PASS_DEF_LOWERZEROTOZRT
#include "passes/Conversion/ZeroToZrt/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

MemRefType zero::getBufferType(Type tensorType) {
  auto tensor = cast<RankedTensorType>(tensorType);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

/// The gradient that `add` (nn.add, or nn.accumulate_exact) adds into an
/// accumulator argument (a micro-step of zero-accumulate-gradients), into
/// `gradients`.
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
    for (Value result : op.getResults())
      if (result.use_empty())
        unread.insert(result);
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
    if (auto update = dyn_cast<nn::OptimizerUpdateOpInterface>(op))
      gradients.insert(update.getGrad());
    else if (isa<ReduceScatterOp, ReduceScatterStartOp>(op))
      gradients.insert(op->getOperand(0));
    else if (isa<nn::AddOp, nn::AccumulateExactOp>(op))
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
    } else if (auto fromExact = dyn_cast<nn::FromExactOp>(op)) {
      if (isGradient(fromExact.getResult()))
        gradients.insert(fromExact.getInput());
    } else if (auto toExact = dyn_cast<nn::AccumulateExactOp>(op)) {
      // A gradient converted for an exact reduction (a zero accumulator
      // plus the gradient).
      if (isGradient(toExact.getResult()))
        gradients.insert(toExact->operand_begin(), toExact->operand_end());
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

StepLowering::StepLowering(func::FuncOp tensorFunc, Value lossOut)
    : tensorFunc(tensorFunc), arguments(tensorFunc.getArguments()),
      loss(lossOut) {
  analyse();
}

void StepLowering::setArgumentBuffers(ValueRange argumentBuffers) {
  for (auto [arg, buffer] : llvm::zip_equal(arguments, argumentBuffers))
    buffers[arg] = buffer;
}

Value StepLowering::typedAs(Value buffer, Value tensor) {
  MemRefType type = getBufferType(tensor.getType());
  if (buffer.getType() == type)
    return buffer;
  return zrt::ViewOp::create(*b, tensor.getLoc(), type, buffer);
}

Value StepLowering::bufferFor(Value result, zrt::MemCategory category,
                              Value inPlaceOperand,
                              std::optional<unsigned> operandDiesAt) {
  unsigned dies = operandDiesAt.value_or(position);
  if (Value dest = destinations.lookup(result)) {
    auto it = lastUse.find(dest);
    bool deadBefore = it == lastUse.end() || it->second < position;
    bool dyingHere =
        it != lastUse.end() && it->second == dies && inPlaceOperand == dest;
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
  return buffers[result] = zrt::AllocOp::create(
             *b, result.getLoc(), getBufferType(result.getType()), category,
             /*arena_offset=*/nullptr);
}

void StepLowering::begin(Operation *op, OpBuilder &builder) {
  b = &builder;
  position = positions.lookup(op);
}

SmallVector<Value> StepLowering::finish(Operation *op) {
  // What dies here: this op's last operands, the inputs of collectives
  // whose wait this is (their last use was moved to the wait), and the
  // results nothing reads.
  llvm::SmallSetVector<Value, 4> dying;
  for (Value value : deaths.lookup(position))
    dying.insert(value);
  for (Value result : op->getResults())
    if (unread.contains(result))
      dying.insert(result);
  for (Value value : dying)
    if (owned.remove(value))
      zrt::FreeOp::create(*b, op->getLoc(), buf(value));
  SmallVector<Value> replacements;
  for (Value result : op->getResults())
    replacements.push_back(buf(result));
  return replacements;
}

StepTypeConverter::StepTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion(
      [](RankedTensorType tensor) -> Type { return getBufferType(tensor); });
  addConversion([](FutureType future) -> Type {
    return zrt::HandleType::get(future.getContext());
  });
}

namespace {
/// The function: its arguments become their buffers, its results go away
/// (they are written into the buffers of the arguments they update, and
/// the loss into the loss buffer).
class LowerSignature : public OpConversionPattern<func::FuncOp> {
public:
  LowerSignature(const TypeConverter &converter, StepLowering &lowering)
      : OpConversionPattern(converter, lowering.getContext()), l(lowering) {}

  LogicalResult
  matchAndRewrite(func::FuncOp func, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TypeConverter::SignatureConversion signature(func.getNumArguments());
    if (failed(getTypeConverter()->convertSignatureArgs(func.getArgumentTypes(),
                                                        signature)))
      return failure();
    Block *entry = rewriter.applySignatureConversion(
        &func.getBody().front(), signature, getTypeConverter());
    l.setArgumentBuffers(entry->getArguments());
    rewriter.modifyOpInPlace(func, [&] {
      func.setType(rewriter.getFunctionType(signature.getConvertedTypes(),
                                            /*results=*/{}));
    });
    return success();
  }

private:
  StepLowering &l;
};

/// The return: results that update an argument go to its buffer; the one
/// result that does not is the loss (absent from the optimizer step of
/// gradient accumulation), copied to the loss buffer.
class LowerReturn : public OpConversionPattern<func::ReturnOp> {
public:
  LowerReturn(const TypeConverter &converter, StepLowering &lowering)
      : OpConversionPattern(converter, lowering.getContext()), l(lowering) {}

  LogicalResult
  matchAndRewrite(func::ReturnOp ret, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    l.begin(ret, rewriter);
    for (auto [value, buffer] :
         llvm::zip_equal(ret.getOperands(), adaptor.getOperands())) {
      Value dest = l.destinationOf(value);
      Value target = l.buf(dest ? dest : l.lossOut());
      if (buffer != target)
        zrt::CopyOp::create(rewriter, ret.getLoc(), buffer, target,
                            getByteSize(value.getType()), /*src_offset=*/0,
                            /*dst_offset=*/0);
    }
    l.finish(ret);
    rewriter.replaceOpWithNewOp<func::ReturnOp>(ret);
    return success();
  }

private:
  StepLowering &l;
};

/// Lowers the body of `tensorFunc`, whose last argument is the loss buffer
/// when `withLoss`, in place: one dialect conversion of the function.
LogicalResult lowerStepFunction(func::FuncOp tensorFunc, bool withLoss) {
  MLIRContext *context = tensorFunc.getContext();
  StepLowering lowering(tensorFunc,
                        withLoss ? tensorFunc.getArguments().back() : Value());
  StepTypeConverter converter;
  RewritePatternSet patterns(context);
  patterns.add<LowerSignature, LowerReturn>(converter, lowering);
  populateKernelLoweringPatterns(patterns, converter, lowering);
  populateShardingLoweringPatterns(patterns, converter, lowering);

  // Every op must have a pattern, checked first: the conversion then cannot
  // stop half way, and the error names the op and why.
  DenseSet<OperationName> lowerable;
  for (const std::unique_ptr<RewritePattern> &pattern :
       patterns.getNativePatterns())
    if (std::optional<OperationName> root = pattern->getRootKind())
      lowerable.insert(*root);
  for (Operation &op : tensorFunc.getBody().front()) {
    if (!lowerable.contains(op.getName()))
      return op.emitOpError("cannot be lowered to the runtime: no zrt "
                            "kernel implements it");
    if (failed(checkLowerable(&op)))
      return failure();
  }

  ConversionTarget target(*context);
  target.addLegalDialect<zrt::ZrtDialect>();
  target.addIllegalDialect<nn::NNDialect, ZeroDialect, arith::ArithDialect>();
  target.addDynamicallyLegalOp<func::FuncOp>([](func::FuncOp func) {
    return func.getNumResults() == 0 &&
           llvm::none_of(func.getArgumentTypes(), llvm::IsaPred<TensorType>);
  });
  target.addDynamicallyLegalOp<func::ReturnOp>(
      [](func::ReturnOp ret) { return ret.getNumOperands() == 0; });
  ConversionConfig config;
  // The buffer assignment decided every op's buffers from the ops as they
  // are; folding one away would leave a buffer nobody writes.
  config.foldingMode = DialectConversionFoldingMode::Never;
  return applyFullConversion(tensorFunc.getOperation(), target,
                             std::move(patterns), config);
}
} // namespace

LogicalResult zero::checkLowerable(Operation *op) {
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
    bool exactZero = splat && splat.getElementType().isInteger(128) &&
                     splat.getSplatValue<APInt>().isZero();
    if (!splat || !(isa<FloatType>(splat.getElementType()) || exactZero))
      return constant.emitOpError(
          "cannot be lowered to the runtime: only float splat tensor "
          "constants and zero exact accumulators are supported");
  }
  return success();
}

namespace {
struct LowerZeroToZrtPass : zero::impl::LowerZeroToZrtBase<LowerZeroToZrtPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp trainStep =
        lookupFunction(module, kTrainStepFuncName, getArgument(),
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
    // The empty apply function takes the step's buffers: made before the
    // step's arguments are buffers.
    SmallVector<Type> stepBuffers;
    for (Type type : trainStep.getArgumentTypes())
      stepBuffers.push_back(getBufferType(type));
    if (failed(emitEntry(trainStep, "zero_program_step", /*withLoss=*/true)) ||
        (trainApply
             ? failed(emitEntry(trainApply, "zero_program_apply",
                                /*withLoss=*/false))
             : failed(emitEmptyEntry(stepBuffers, "zero_program_apply"))) ||
        (evalStep && failed(emitEntry(evalStep, "zero_program_eval",
                                      /*withLoss=*/true))))
      return signalPassFailure();
    // zrt.declare_program (and zrt.declare_shard_groups) now state the
    // world size, the stage and the mesh.
    for (auto group :
         llvm::make_early_inc_range(module.getOps<sharding::GroupOp>()))
      group.erase();
  }

  /// @name(%buffers..., [%loss]) running `body`, which is lowered to zrt
  /// and then replaced.
  LogicalResult emitEntry(func::FuncOp body, StringRef name, bool withLoss) {
    OpBuilder b(body.getContext());
    // A float32 loss, or an exact one (--deterministic).
    Type lossElement = b.getF32Type();
    if (withLoss && body.getNumResults() > 0)
      lossElement = getElementTypeOrSelf(body.getResultTypes().front());
    MemRefType lossType = MemRefType::get({}, lossElement);
    if (withLoss && failed(body.insertArgument(body.getNumArguments(), lossType,
                                               /*argAttrs=*/{}, body.getLoc())))
      return failure();
    if (failed(lowerStepFunction(body, withLoss)))
      return failure();
    func::FuncOp entry =
        createEntry(name, body.getArgumentTypes(), withLoss, body.getLoc());
    entry.getBody().takeBody(body.getBody());
    body.erase();
    return success();
  }

  /// @name(%buffers...) that does nothing.
  LogicalResult emitEmptyEntry(ArrayRef<Type> argTypes, StringRef name) {
    ModuleOp module = getOperation();
    func::FuncOp entry =
        createEntry(name, argTypes, /*withLoss=*/false, module.getLoc());
    OpBuilder b = OpBuilder::atBlockBegin(entry.addEntryBlock());
    func::ReturnOp::create(b, module.getLoc());
    return success();
  }

  /// The declaration of @name(argTypes) at the end of the module, the last
  /// argument marked as the loss when `withLoss`.
  func::FuncOp createEntry(StringRef name, TypeRange argTypes, bool withLoss,
                           Location loc) {
    ModuleOp module = getOperation();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto entry =
        func::FuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
    if (withLoss)
      entry.setArgAttr(argTypes.size() - 1, zrt::kLossAttrName,
                       b.getUnitAttr());
    return entry;
  }
};
} // namespace
