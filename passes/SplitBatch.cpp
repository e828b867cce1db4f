//===- SplitBatch.cpp - split the global batch across ranks ---------------===//
//
// Data parallelism: each rank runs the model on batch/world-size rows. The
// loss keeps the global mean by dividing by the global batch.
//
//===----------------------------------------------------------------------===//
#include "passes/PassUtils.h"
#include "passes/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

namespace zero {
#define GEN_PASS_DEF_SPLITBATCH
#include "passes/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

/// The type `op`'s results have once its operands have their new types.
/// Every rule keeps the element type and changes at most the row count.
static FailureOr<Type> rederiveResultType(Operation *op) {
  auto withRows = [](Type type, int64_t rows) -> Type {
    auto tensor = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(tensor.getShape());
    shape[0] = rows;
    return tensor.clone(shape);
  };
  auto rowsOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape()[0];
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Type>>(op)
      .Case<nn::MatmulOp, nn::MatmulBiasOp, nn::MatmulBiasGeluOp>(
          [](auto matmul) -> Type {
            return nn::MatmulOp::inferResultType(
                matmul.getLhs(), matmul.getRhs(), matmul.getTransposeLhs(),
                matmul.getTransposeRhs());
          })
      .Case([&](nn::EmbeddingOp lookup) -> Type {
        return withRows(lookup.getType(), rowsOf(lookup.getIds()));
      })
      .Case<nn::SliceColsOp, nn::CastOp>([&](Operation *op) -> Type {
        return withRows(op->getResult(0).getType(),
                        rowsOf(op->getOperand(0)));
      })
      .Case<nn::SumRowsOp, nn::SoftmaxCrossEntropyOp>(
          [](Operation *op) -> Type { return op->getResult(0).getType(); })
      .Case<nn::BiasAddOp, nn::AddOp, nn::ReluOp, nn::GeluOp, nn::ReluGradOp,
            nn::GeluGradOp, nn::SoftmaxCrossEntropyGradOp, nn::LayerNormOp,
            nn::RmsNormOp, nn::SwigluOp, nn::RopeOp, nn::AttentionOp>(
          [](Operation *elementwise) -> Type {
            return elementwise->getOperand(0).getType();
          })
      .Default([](Operation *) { return failure(); });
}

namespace {
struct SplitBatchPass : zero::impl::SplitBatchBase<SplitBatchPass> {
  using SplitBatchBase::SplitBatchBase;

  void runOnOperation() override {
    func::FuncOp func = lookupFunction(getOperation(), kForwardFuncName,
                                       getArgument(), "the model's forward");
    if (!func || failed(splitArguments(func)) || failed(retypeBody(func)) ||
        failed(declareGroup(func)))
      return signalPassFailure();
  }

  /// States the world size once for the module: zero.group @dp, which every
  /// later pass and every collective reads.
  LogicalResult declareGroup(func::FuncOp func) {
    ModuleOp module = getOperation();
    if (GroupOp existing = getDataParallelGroup(module))
      return existing.emitError()
             << getArgument() << ": the module already declares its "
             << "data-parallel group; split the batch once";
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    GroupOp::create(b, func.getLoc(), kDataParallelGroup, worldSize.getValue(),
                    /*stage=*/nullptr);
    return success();
  }

  /// Divides the leading dimension of every data argument by the world size.
  LogicalResult splitArguments(func::FuncOp func) {
    if (worldSize < 1)
      return func.emitError() << getArgument()
                              << ": world-size must be at least 1, got "
                              << worldSize.getValue();
    if (microBatches < 1)
      return func.emitError() << getArgument()
                              << ": micro-batches must be at least 1, got "
                              << microBatches.getValue();
    auto placement = PlacementAttr::get(&getContext(), Role::Data,
                                        Distribution::Sharded);
    Block &entry = func.getBody().front();
    for (BlockArgument arg : entry.getArguments()) {
      unsigned index = arg.getArgNumber();
      if (!getParamName(func, index).empty())
        continue;
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() == 0 || !type.hasStaticShape())
        return func.emitError()
               << getArgument() << ": data argument #" << index
               << " must be a statically shaped tensor with a batch "
                  "dimension, got "
               << arg.getType();
      int64_t rows = type.getShape()[0];
      // Token data holds whole sequences: ranks split sequences, not tokens.
      int64_t rowsPerItem = 1;
      if (auto seqLen = func->getAttrOfType<IntegerAttr>(kSeqLenAttrName))
        rowsPerItem = seqLen.getInt();
      // Divided in turn: their product may not fit in 64 bits.
      if (rows % rowsPerItem != 0 || (rows / rowsPerItem) % worldSize != 0) {
        if (rowsPerItem == 1)
          return func.emitError()
                 << getArgument() << ": the batch of data argument #" << index
                 << " has " << rows << " rows, which do not divide by "
                 << "world-size " << worldSize.getValue();
        return func.emitError()
               << getArgument() << ": data argument #" << index << " holds "
               << rows << " tokens, which are not whole sequences of "
               << rowsPerItem << " for each of world-size "
               << worldSize.getValue() << " ranks";
      }
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = rows / worldSize;
      arg.setType(type.clone(shape));
      func.setArgAttr(index, kPlacementAttrName, placement);
    }
    return success();
  }

  /// Re-derives every result type from the new argument types; losses keep
  /// dividing by the global batch.
  LogicalResult retypeBody(func::FuncOp func) {
    Block &entry = func.getBody().front();
    Builder builder(&getContext());
    for (Operation &op : entry.without_terminator()) {
      if (auto loss = dyn_cast<nn::SoftmaxCrossEntropyOp>(op))
        if (!loss.getDivisor())
          loss.setDivisorAttr(builder.getI64IntegerAttr(
              loss.getLogits().getType().getShape()[0] * worldSize *
              microBatches));
      // The one multi-result op has results of one type.
      if (op.getNumResults() != 1 && !isa<nn::MatmulBiasGeluOp>(op))
        return op.emitOpError() << "cannot be split by " << getArgument()
                                << ": expected an op with one result";
      FailureOr<Type> type = rederiveResultType(&op);
      if (failed(type))
        return op.emitOpError() << "cannot be split by " << getArgument()
                                << ": no rule for its result shape";
      for (Value result : op.getResults())
        result.setType(*type);
    }
    func.setType(FunctionType::get(
        &getContext(), entry.getArgumentTypes(),
        entry.getTerminator()->getOperandTypes()));
    return success();
  }
};
} // namespace
