//===- LowerToRuntime.cpp - @train_step to calls of libzrt ----------------===//
//
// Turns the tensor program into the two functions a zero-opt executable
// exports (see include/zero/zrt.h): one that describes the program's
// arguments to the runtime, one that runs a training step on their buffers.
// Buffers are allocated before their producer and freed right after their
// last use, so the runtime's ledger sees the program's real liveness.
//
//===----------------------------------------------------------------------===//
#include "passes/PassUtils.h"
#include "passes/Passes.h"
#include "passes/RuntimeCalls.h"
#include "zero/zrt.h"

#include "llvm/ADT/TypeSwitch.h"

namespace zero {
#define GEN_PASS_DEF_LOWERTORUNTIME
#include "passes/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

static int64_t byteSize(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() *
         ((tensor.getElementTypeBitWidth() + 7) / 8);
}

namespace {

/// Lowers the body of @train_step into @zero_program_step.
class StepLowering {
public:
  StepLowering(func::FuncOp trainStep, RuntimeCalls &rt, OpBuilder &b,
               Value ctx)
      : trainStep(trainStep), rt(rt), b(b), ctx(ctx) {}

  LogicalResult lower(Value argsArray, Value lossOut);

private:
  func::FuncOp trainStep;
  RuntimeCalls &rt;
  OpBuilder &b;
  Value ctx;
  int64_t worldSize = 1;
  /// The buffer (!llvm.ptr) holding each tensor.
  DenseMap<Value, Value> buffers;
  /// Tensors whose buffer this step allocated and must free.
  llvm::SetVector<Value> owned;
  /// Position in the block of each tensor's last user.
  DenseMap<Value, unsigned> lastUse;
  /// Results that update an argument, and that argument.
  DenseMap<Value, Value> destinations;
  unsigned position = 0;

  void analyse();
  LogicalResult lowerOp(Operation *op);
  void lowerReturn(func::ReturnOp ret, Value lossOut);
  void freeDeadValues(Operation *op);
  Value bufferFor(Value result, zrt_mem_category category,
                  Value inPlaceOperand = nullptr);
  Value buf(Value tensor) { return buffers.lookup(tensor); }
  void call(Location loc, StringRef name, ArrayRef<Value> args) {
    SmallVector<Value> operands{ctx};
    operands.append(args.begin(), args.end());
    rt.call(loc, name, operands);
  }
};

void StepLowering::analyse() {
  Block &entry = trainStep.getBody().front();
  for (auto [index, op] : llvm::enumerate(entry))
    for (Value operand : op.getOperands())
      lastUse[operand] = index;
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  for (unsigned i = 1, e = ret.getNumOperands(); i < e; ++i)
    if (auto updates =
            trainStep.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttrName))
      destinations[ret.getOperand(i)] = trainStep.getArgument(updates.getInt());
  if (auto attr = trainStep->getAttrOfType<IntegerAttr>(kWorldSizeAttrName))
    worldSize = attr.getInt();
}

/// Chooses the buffer of `result`: straight into the argument it updates
/// when nothing reads that argument afterwards; over `inPlaceOperand` when
/// the op may write in place and the operand dies here; else a new one.
Value StepLowering::bufferFor(Value result, zrt_mem_category category,
                              Value inPlaceOperand) {
  if (Value dest = destinations.lookup(result)) {
    auto it = lastUse.find(dest);
    bool deadBefore = it == lastUse.end() || it->second < position;
    bool dyingHere = it != lastUse.end() && it->second == position &&
                     inPlaceOperand == dest;
    if (deadBefore || dyingHere)
      return buffers[result] = buf(dest);
  }
  if (inPlaceOperand && owned.contains(inPlaceOperand) &&
      lastUse.lookup(inPlaceOperand) == position &&
      byteSize(inPlaceOperand.getType()) == byteSize(result.getType())) {
    owned.remove(inPlaceOperand);
    owned.insert(result);
    return buffers[result] = buf(inPlaceOperand);
  }
  Location loc = result.getLoc();
  Value ptr = rt.call(loc, "zrt_alloc",
                      {ctx, rt.i64(loc, byteSize(result.getType())),
                       rt.i32(loc, category)},
                      rt.ptrType())
                  .getResult(0);
  owned.insert(result);
  return buffers[result] = ptr;
}

LogicalResult StepLowering::lowerOp(Operation *op) {
  Location loc = op->getLoc();
  auto n = [&](Value v) { return rt.i64(loc, getNumElements(v.getType())); };
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp constant) -> LogicalResult {
        auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
        if (!splat || !splat.getElementType().isF32())
          return op->emitOpError("cannot be lowered to the runtime: only "
                                 "f32 splat tensor constants are supported");
        Value out = bufferFor(constant, ZRT_MEM_ACTIVATION);
        call(loc, "zrt_fill",
             {out, n(constant),
              rt.f32(loc, splat.getSplatValue<APFloat>().convertToFloat())});
        return success();
      })
      .Case([&](nn::MatmulOp mm) {
        auto lhs = shape(mm.getLhs());
        int64_t k = mm.getTransposeLhs() ? lhs[0] : lhs[1];
        auto out = shape(mm.getResult());
        Value c = bufferFor(mm, ZRT_MEM_ACTIVATION);
        call(loc, "zrt_matmul",
             {buf(mm.getLhs()), buf(mm.getRhs()), c, rt.i64(loc, out[0]),
              rt.i64(loc, out[1]), rt.i64(loc, k),
              rt.i32(loc, mm.getTransposeLhs()),
              rt.i32(loc, mm.getTransposeRhs())});
        return success();
      })
      .Case([&](nn::BiasAddOp add) {
        auto s = shape(add.getInput());
        Value y = bufferFor(add, ZRT_MEM_ACTIVATION, add.getInput());
        call(loc, "zrt_bias_add",
             {buf(add.getInput()), buf(add.getBias()), y, rt.i64(loc, s[0]),
              rt.i64(loc, s[1])});
        return success();
      })
      .Case([&](nn::SumRowsOp sum) {
        auto s = shape(sum.getInput());
        Value y = bufferFor(sum, ZRT_MEM_ACTIVATION);
        call(loc, "zrt_sum_rows",
             {buf(sum.getInput()), y, rt.i64(loc, s[0]), rt.i64(loc, s[1])});
        return success();
      })
      .Case([&](nn::AddOp add) {
        Value y = bufferFor(add, ZRT_MEM_ACTIVATION, add.getLhs());
        call(loc, "zrt_add", {buf(add.getLhs()), buf(add.getRhs()), y, n(add)});
        return success();
      })
      .Case<nn::ReluOp, nn::GeluOp>([&](auto act) {
        StringRef name = isa<nn::ReluOp>(op) ? "zrt_relu" : "zrt_gelu";
        Value y = bufferFor(act, ZRT_MEM_ACTIVATION);
        call(loc, name, {buf(act.getInput()), y, n(act)});
        return success();
      })
      .Case<nn::ReluGradOp, nn::GeluGradOp>([&](auto grad) {
        StringRef name =
            isa<nn::ReluGradOp>(op) ? "zrt_relu_grad" : "zrt_gelu_grad";
        Value dx = bufferFor(grad, ZRT_MEM_ACTIVATION);
        call(loc, name,
             {buf(grad.getInput()), buf(grad.getResultGrad()), dx, n(grad)});
        return success();
      })
      .Case([&](nn::SoftmaxCrossEntropyOp loss) {
        auto s = shape(loss.getLogits());
        Value out = bufferFor(loss, ZRT_MEM_ACTIVATION);
        call(loc, "zrt_softmax_xent",
             {buf(loss.getLogits()), buf(loss.getLabels()), out,
              rt.i64(loc, s[0]), rt.i64(loc, s[1]),
              rt.f32(loc, loss.getEffectiveDivisor())});
        return success();
      })
      .Case([&](nn::SoftmaxCrossEntropyGradOp grad) {
        auto s = shape(grad.getLogits());
        Value out = bufferFor(grad, ZRT_MEM_ACTIVATION);
        call(loc, "zrt_softmax_xent_grad",
             {buf(grad.getLogits()), buf(grad.getLabels()),
              buf(grad.getLossGrad()), out, rt.i64(loc, s[0]),
              rt.i64(loc, s[1]), rt.f32(loc, grad.getDivisor())});
        return success();
      })
      .Case([&](nn::AdamWOp update) {
        Value p = bufferFor(update.getNewParam(), ZRT_MEM_OPTIMIZER,
                            update.getParam());
        Value m = bufferFor(update.getNewExpAvg(), ZRT_MEM_OPTIMIZER,
                            update.getExpAvg());
        Value v = bufferFor(update.getNewExpAvgSq(), ZRT_MEM_OPTIMIZER,
                            update.getExpAvgSq());
        call(loc, "zrt_adamw",
             {buf(update.getParam()), buf(update.getGrad()),
              buf(update.getExpAvg()), buf(update.getExpAvgSq()), p, m, v,
              n(update.getParam()), buf(update.getLr()), buf(update.getStep()),
              rt.f32(loc, update.getBeta1().convertToFloat()),
              rt.f32(loc, update.getBeta2().convertToFloat()),
              rt.f32(loc, update.getEps().convertToFloat()),
              rt.f32(loc, update.getWeightDecay().convertToFloat())});
        return success();
      })
      .Case([&](AllGatherOp gather) {
        Value full = bufferFor(gather, ZRT_MEM_COMM);
        call(loc, "zrt_all_gather",
             {buf(gather.getInput()), full, n(gather), n(gather.getInput())});
        return success();
      })
      .Case([&](ReduceScatterOp scatter) {
        Value shard = bufferFor(scatter, ZRT_MEM_GRAD);
        call(loc, "zrt_reduce_scatter",
             {buf(scatter.getInput()), shard, n(scatter.getInput()),
              n(scatter)});
        return success();
      })
      .Case([&](AllReduceOp reduce) {
        Value y = bufferFor(reduce, ZRT_MEM_GRAD, reduce.getInput());
        call(loc, "zrt_all_reduce", {buf(reduce.getInput()), y, n(reduce)});
        return success();
      })
      .Case([&](LocalShardOp slice) {
        Value shard = bufferFor(slice, ZRT_MEM_OPTIMIZER);
        call(loc, "zrt_shard_slice",
             {buf(slice.getInput()), shard, n(slice.getInput()), n(slice)});
        return success();
      })
      .Case([&](ReleaseOp) {
        return success(); // Its operand dies here; freeDeadValues frees it.
      })
      .Default([&](Operation *) {
        return op->emitOpError("cannot be lowered to the runtime: no zrt "
                               "kernel implements it");
      });
}

void StepLowering::freeDeadValues(Operation *op) {
  llvm::SmallSetVector<Value, 4> dying;
  for (Value operand : op->getOperands())
    if (lastUse.lookup(operand) == position)
      dying.insert(operand);
  for (Value result : op->getResults())
    if (result.use_empty())
      dying.insert(result);
  for (Value value : dying)
    if (owned.remove(value))
      rt.call(op->getLoc(), "zrt_free", {ctx, buf(value)});
}

void StepLowering::lowerReturn(func::ReturnOp ret, Value lossOut) {
  Location loc = ret.getLoc();
  Value loss = ret.getOperand(0);
  call(loc, "zrt_copy", {buf(loss), lossOut, rt.i64(loc, byteSize(loss.getType()))});
  for (Value value : ret.getOperands().drop_front()) {
    Value dest = destinations.lookup(value);
    if (buf(value) != buf(dest))
      call(loc, "zrt_copy",
           {buf(value), buf(dest), rt.i64(loc, byteSize(value.getType()))});
  }
}

LogicalResult StepLowering::lower(Value argsArray, Value lossOut) {
  analyse();
  Location loc = trainStep.getLoc();
  Type ptr = rt.ptrType();
  for (BlockArgument arg : trainStep.getArguments()) {
    Value slot = LLVM::GEPOp::create(b, arg.getLoc(), ptr, ptr, argsArray,
                                     ArrayRef<LLVM::GEPArg>{
                                         static_cast<int32_t>(arg.getArgNumber())});
    buffers[arg] = LLVM::LoadOp::create(b, arg.getLoc(), ptr, slot);
  }
  for (Operation &op : trainStep.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      lowerReturn(ret, lossOut);
    else if (failed(lowerOp(&op)))
      return failure();
    freeDeadValues(&op);
    ++position;
  }
  (void)loc;
  return success();
}

//===----------------------------------------------------------------------===//
// The description of the program's arguments
//===----------------------------------------------------------------------===//

struct ArgDescription {
  std::string name;
  zrt_role role;
  int64_t numElements;
  bool sharded;
  zrt_init init = ZRT_INIT_ZEROS;
  float initScale = 0.0f;
};

/// How the runtime must allocate and fill argument `index` of @train_step.
static FailureOr<ArgDescription> describeArgument(func::FuncOp func,
                                                  unsigned index) {
  auto placement =
      func.getArgAttrOfType<PlacementAttr>(index, kPlacementAttrName);
  Type type = func.getArgument(index).getType();
  if (auto unsharded =
          func.getArgAttrOfType<TypeAttr>(index, kUnshardedTypeAttrName))
    type = unsharded.getValue();
  auto tensor = cast<RankedTensorType>(type);
  ArgDescription desc{"", ZRT_ROLE_FEATURES, tensor.getNumElements(),
                      placement && placement.isSharded() &&
                          placement.getRole() != Role::Data};
  if (StringRef name = getParamName(func, index); !name.empty()) {
    desc.name = name.str();
    desc.role = ZRT_ROLE_PARAM;
    // Weights as torch.nn.Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)); biases
    // start at zero.
    if (tensor.getRank() == 2) {
      desc.init = ZRT_INIT_UNIFORM;
      desc.initScale = 1.0f / std::sqrt(static_cast<float>(tensor.getShape()[0]));
    }
  } else if (StringRef m = getArgString(func, index, kAdamMAttrName);
             !m.empty()) {
    desc.name = ("adam_m." + m).str();
    desc.role = ZRT_ROLE_ADAM_M;
  } else if (StringRef v = getArgString(func, index, kAdamVAttrName);
             !v.empty()) {
    desc.name = ("adam_v." + v).str();
    desc.role = ZRT_ROLE_ADAM_V;
  } else if (StringRef hyper = getArgString(func, index, kHyperAttrName);
             !hyper.empty()) {
    desc.name = hyper.str();
    if (hyper != "lr" && hyper != "step")
      return func.emitError() << "zero-lower-to-runtime: unknown "
                              << kHyperAttrName << " \"" << hyper << "\"";
    desc.role = hyper == "lr" ? ZRT_ROLE_LR : ZRT_ROLE_STEP;
  } else if (tensor.getRank() == 2 && tensor.getElementType().isF32()) {
    desc.name = "features";
    desc.role = ZRT_ROLE_FEATURES;
  } else if (tensor.getRank() == 1 && tensor.getElementType().isInteger(32)) {
    desc.name = "labels";
    desc.role = ZRT_ROLE_LABELS;
  } else {
    return func.emitError()
           << "zero-lower-to-runtime: argument #" << index << " (" << type
           << ") is neither state nor data the runtime can feed (a float "
              "feature matrix or an int32 label vector)";
  }
  return desc;
}

struct LowerToRuntimePass
    : zero::impl::LowerToRuntimeBase<LowerToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp trainStep = lookupFunction(
        module, kTrainStepFuncName, getArgument(),
        "run zero-insert-collectives first");
    if (!trainStep || failed(emitDescribe(trainStep)) ||
        failed(emitStep(trainStep)))
      return signalPassFailure();
    trainStep.erase();
  }

  /// @zero_program_describe(%ctx): the program and each argument.
  LogicalResult emitDescribe(func::FuncOp trainStep) {
    ModuleOp module = getOperation();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    RuntimeCalls rt(module, b);
    Location loc = trainStep.getLoc();
    auto describe = func::FuncOp::create(
        b, loc, "zero_program_describe",
        b.getFunctionType({rt.ptrType()}, {}));
    Block *body = describe.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value ctx = body->getArgument(0);

    SmallVector<ArgDescription> args;
    int64_t localBatch = 0, numFeatures = 0;
    for (unsigned i = 0, e = trainStep.getNumArguments(); i < e; ++i) {
      FailureOr<ArgDescription> desc = describeArgument(trainStep, i);
      if (failed(desc))
        return failure();
      if (desc->role == ZRT_ROLE_FEATURES) {
        auto shape = cast<RankedTensorType>(trainStep.getArgument(i).getType())
                         .getShape();
        localBatch = shape[0];
        numFeatures = shape[1];
      }
      args.push_back(*desc);
    }
    int64_t numClasses = 0;
    trainStep.walk([&](nn::SoftmaxCrossEntropyOp loss) {
      numClasses = loss.getLogits().getType().getShape()[1];
    });
    if (!localBatch || !numClasses)
      return trainStep.emitError()
             << getArgument()
             << ": @train_step needs a feature matrix argument and an "
                "nn.softmax_cross_entropy loss for the runtime's data set";

    auto intAttr = [&](StringRef name) -> int64_t {
      auto attr = trainStep->getAttrOfType<IntegerAttr>(name);
      return attr ? attr.getInt() : 0;
    };
    int64_t worldSize = std::max<int64_t>(1, intAttr(kWorldSizeAttrName));
    rt.call(loc, "zrt_declare_program",
            {ctx, rt.i64(loc, ZRT_ABI_VERSION), rt.i64(loc, worldSize),
             rt.i64(loc, intAttr(kStageAttrName)),
             rt.i64(loc, localBatch * worldSize), rt.i64(loc, numFeatures),
             rt.i64(loc, numClasses)});
    for (auto [i, arg] : llvm::enumerate(args))
      rt.call(loc, "zrt_declare_arg",
              {ctx, rt.i64(loc, i), rt.string(loc, arg.name),
               rt.i32(loc, arg.role), rt.i64(loc, arg.numElements),
               rt.i32(loc, arg.sharded), rt.i32(loc, arg.init),
               rt.f32(loc, arg.initScale)});
    func::ReturnOp::create(b, loc);
    return success();
  }

  /// @zero_program_step(%ctx, %args, %loss): one training step.
  LogicalResult emitStep(func::FuncOp trainStep) {
    ModuleOp module = getOperation();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    RuntimeCalls rt(module, b);
    Type ptr = rt.ptrType();
    Location loc = trainStep.getLoc();
    auto step = func::FuncOp::create(b, loc, "zero_program_step",
                                     b.getFunctionType({ptr, ptr, ptr}, {}));
    Block *body = step.addEntryBlock();
    b.setInsertionPointToStart(body);
    StepLowering lowering(trainStep, rt, b, body->getArgument(0));
    if (failed(lowering.lower(body->getArgument(1), body->getArgument(2))))
      return failure();
    func::ReturnOp::create(b, loc);
    return success();
  }
};
} // namespace
