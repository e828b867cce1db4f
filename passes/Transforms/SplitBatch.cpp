//===- SplitBatch.cpp - split the global batch across ranks ---------------===//
//
// Data parallelism: each rank runs the model on batch/world-size rows. The
// loss keeps the global mean by dividing by the global batch.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

#include "llvm/Support/MathExtras.h"

namespace zero {
#define GEN_PASS_DEF_SPLITBATCH
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {
struct SplitBatchPass : zero::impl::SplitBatchBase<SplitBatchPass> {
  using SplitBatchBase::SplitBatchBase;

  void runOnOperation() override {
    func::FuncOp func = lookupFunction(getOperation(), kForwardFuncName,
                                       getArgument(), "the model's forward");
    if (!func || failed(checkTypes(func)) || failed(splitArguments(func)) ||
        failed(retypeBody(func)) || failed(declareGroup(func)))
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
                    /*stage=*/nullptr, /*axis=*/nullptr, /*parent=*/nullptr);
    return success();
  }

  /// Refuses, by argument or op, the types the later passes cannot take: a
  /// parameter that is no static float tensor (AdamW keeps float32 state of
  /// its shape), data whose kind does not fit its type (the runtime feeds
  /// float feature matrices and int32 vectors), and any tensor larger than
  /// kMaxTensorBytes.
  LogicalResult checkTypes(func::FuncOp func) {
    for (BlockArgument arg : func.getArguments()) {
      unsigned index = arg.getArgNumber();
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      bool isFloat = type && (type.getElementType().isF32() ||
                              type.getElementType().isBF16());
      if (StringRef param = getParamName(func, index); !param.empty()) {
        if (!isFloat || !type.hasStaticShape())
          return func.emitError()
                 << getArgument() << ": parameter argument #" << index << " ('"
                 << param << "') must be a statically shaped f32 "
                 << "or bf16 tensor, got " << arg.getType();
      } else if (StringRef kind = getArgString(func, index, kDataAttrName);
                 !kind.empty()) {
        bool features = kind == "features";
        bool fits = features ? isFloat && type.getRank() == 2
                             : type && type.getRank() == 1 &&
                                   type.getElementType().isInteger(32);
        if (!fits)
          return func.emitError()
                 << getArgument() << ": data argument #" << index << " ('"
                 << kind << "') must be "
                 << (features ? "an f32 or bf16 matrix" : "an i32 vector")
                 << ", got " << arg.getType();
      }
      if (failed(checkSize(arg.getType(), [&] {
            return func.emitError()
                   << getArgument() << ": argument #" << index << " ";
          })))
        return failure();
    }
    for (Operation &op : func.getBody().front())
      for (Type type : op.getResultTypes())
        if (failed(checkSize(type, [&] {
              return op.emitOpError() << "cannot be split by " << getArgument()
                                      << ": its result ";
            })))
          return failure();
    return success();
  }

  /// Refuses a tensor type that is not static or is larger than
  /// kMaxTensorBytes, through `error` (the message's start); other types are
  /// left to the checks that know them.
  static LogicalResult checkSize(Type type,
                                 function_ref<InFlightDiagnostic()> error) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return success();
    if (!tensor.hasStaticShape())
      return error() << type << " must be statically shaped";
    // Counted with overflow checks: a shape's element count may not fit in
    // 64 bits.
    int64_t bytes = tensor.getElementType().isIntOrFloat()
                        ? (tensor.getElementTypeBitWidth() + 7) / 8
                        : 8;
    for (int64_t dim : tensor.getShape())
      if (llvm::MulOverflow(bytes, dim, bytes) || bytes > kMaxTensorBytes)
        return error() << type << " holds more than " << kMaxTensorBytes
                       << " bytes, the address space of a rank";
    return success();
  }

  /// Divides the leading dimension of every data argument by the world size.
  LogicalResult splitArguments(func::FuncOp func) {
    if (worldSize < 1)
      return func.emitError()
             << getArgument() << ": world-size must be at least 1, got "
             << worldSize.getValue();
    if (microBatches < 1)
      return func.emitError()
             << getArgument() << ": micro-batches must be at least 1, got "
             << microBatches.getValue();
    auto placement = PlacementAttr::get(
        &getContext(), Role::Data, Distribution::Sharded, FlatSymbolRefAttr());
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
      // Each op says its per-rank result type (nn's BatchSplitOpInterface).
      auto splittable = dyn_cast<nn::BatchSplitOpInterface>(op);
      if (!splittable)
        return op.emitOpError() << "cannot be split by " << getArgument()
                                << ": no rule for its result shape";
      Type type = splittable.inferSplitResultType();
      for (Value result : op.getResults())
        result.setType(type);
    }
    func.setType(FunctionType::get(&getContext(), entry.getArgumentTypes(),
                                   entry.getTerminator()->getOperandTypes()));
    return success();
  }
};
} // namespace
