//===- NNOps.cpp - nn op builders and verifiers ---------------------------===//
//
// Verifiers check the labelled constraints (C1, C2, ...) of each op's
// TableGen description and name the label in their message.
//
//===----------------------------------------------------------------------===//
#include "dialects/nn/NNDialect.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace zero::nn;


//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

/// Rows and columns of `op(matrix)`.
static std::pair<int64_t, int64_t> transposedShape(Value matrix,
                                                   bool transpose) {
  auto shape = cast<RankedTensorType>(matrix.getType()).getShape();
  return transpose ? std::make_pair(shape[1], shape[0])
                   : std::make_pair(shape[0], shape[1]);
}

RankedTensorType MatmulOp::inferResultType(Value lhs, Value rhs,
                                           bool transposeLhs,
                                           bool transposeRhs) {
  int64_t rows = transposedShape(lhs, transposeLhs).first;
  int64_t cols = transposedShape(rhs, transposeRhs).second;
  return RankedTensorType::get(
      {rows, cols}, cast<RankedTensorType>(lhs.getType()).getElementType());
}

void MatmulOp::build(OpBuilder &builder, OperationState &state, Value lhs,
                     Value rhs, bool transposeLhs, bool transposeRhs) {
  build(builder, state, inferResultType(lhs, rhs, transposeLhs, transposeRhs),
        lhs, rhs, transposeLhs, transposeRhs);
}

/// Constraints (C1) and (C2) of nn.matmul and the fused linear ops.
static LogicalResult verifyMatmulShapes(Operation *op, Value lhs, Value rhs,
                                        bool transposeLhs, bool transposeRhs,
                                        RankedTensorType resultType) {
  auto [rows, lhsInner] = transposedShape(lhs, transposeLhs);
  auto [rhsInner, cols] = transposedShape(rhs, transposeRhs);
  if (lhsInner != rhsInner)
    return op->emitOpError("(C1) contraction dimensions differ: op(lhs) is ")
           << rows << "x" << lhsInner << " but op(rhs) is " << rhsInner << "x"
           << cols;
  auto resultShape = resultType.getShape();
  if (resultShape[0] != rows || resultShape[1] != cols)
    return op->emitOpError("(C2) result must be ")
           << rows << "x" << cols << ", got " << resultType;
  return success();
}

LogicalResult MatmulOp::verify() {
  return verifyMatmulShapes(*this, getLhs(), getRhs(), getTransposeLhs(),
                            getTransposeRhs(), getResult().getType());
}

//===----------------------------------------------------------------------===//
// MatmulBiasOp, MatmulBiasGeluOp
//===----------------------------------------------------------------------===//

template <typename FusedOp>
static LogicalResult verifyMatmulBias(FusedOp op) {
  RankedTensorType resultType = op.getResult().getType();
  if (failed(verifyMatmulShapes(op, op.getLhs(), op.getRhs(),
                                op.getTransposeLhs(), op.getTransposeRhs(),
                                resultType)))
    return failure();
  int64_t biasSize = op.getBias().getType().getShape()[0];
  if (biasSize != resultType.getShape()[1])
    return op.emitOpError("(C3) bias has ")
           << biasSize << " elements but the result has "
           << resultType.getShape()[1] << " columns";
  return success();
}

LogicalResult MatmulBiasOp::verify() { return verifyMatmulBias(*this); }
LogicalResult MatmulBiasGeluOp::verify() { return verifyMatmulBias(*this); }

//===----------------------------------------------------------------------===//
// BiasAddOp, SumRowsOp
//===----------------------------------------------------------------------===//

LogicalResult BiasAddOp::verify() {
  int64_t cols = getInput().getType().getShape()[1];
  int64_t biasSize = getBias().getType().getShape()[0];
  if (biasSize != cols)
    return emitOpError("(C1) bias has ")
           << biasSize << " elements but the input has " << cols
           << " columns";
  return success();
}

void SumRowsOp::build(OpBuilder &builder, OperationState &state,
                      Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  build(builder, state,
        RankedTensorType::get({type.getShape()[1]}, type.getElementType()),
        input);
}

LogicalResult SumRowsOp::verify() {
  int64_t cols = getInput().getType().getShape()[1];
  int64_t size = getResult().getType().getShape()[0];
  if (size != cols)
    return emitOpError("(C1) result has ")
           << size << " elements but the input has " << cols << " columns";
  return success();
}

//===----------------------------------------------------------------------===//
// Loss ops
//===----------------------------------------------------------------------===//

static LogicalResult verifyLossOperands(Operation *op, RankedTensorType logits,
                                        RankedTensorType labels,
                                        std::optional<int64_t> divisor) {
  int64_t rows = logits.getShape()[0];
  if (labels.getShape()[0] != rows)
    return op->emitOpError("(C1) expected one label per row of logits (")
           << rows << "), got " << labels.getShape()[0];
  if (divisor && *divisor <= 0)
    return op->emitOpError("(C2) divisor must be positive, got ") << *divisor;
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  return verifyLossOperands(*this, getLogits().getType(),
                            getLabels().getType(), getDivisor());
}

int64_t SoftmaxCrossEntropyOp::getEffectiveDivisor() {
  if (std::optional<int64_t> divisor = getDivisor())
    return *divisor;
  return getLogits().getType().getShape()[0];
}

LogicalResult SoftmaxCrossEntropyGradOp::verify() {
  return verifyLossOperands(*this, getLogits().getType(),
                            getLabels().getType(), getDivisor());
}

//===----------------------------------------------------------------------===//
// AdamWOp
//===----------------------------------------------------------------------===//

/// (C1) of an optimizer update: the gradient has the parameter's shape.
template <typename UpdateOp> static LogicalResult verifyUpdate(UpdateOp op) {
  if (op.getGrad().getType().getShape() != op.getParam().getType().getShape())
    return op.emitOpError("(C1) the gradient ")
           << op.getGrad().getType() << " must have the shape of the parameter "
           << op.getParam().getType();
  return success();
}

LogicalResult AdamWOp::verify() { return verifyUpdate(*this); }
LogicalResult LionOp::verify() { return verifyUpdate(*this); }

//===----------------------------------------------------------------------===//
// BatchSplitOpInterface: the result types zero-split-batch gives
//===----------------------------------------------------------------------===//

Type MatmulOp::inferSplitResultType() {
  return inferResultType(getLhs(), getRhs(), getTransposeLhs(),
                         getTransposeRhs());
}
Type MatmulBiasOp::inferSplitResultType() {
  return MatmulOp::inferResultType(getLhs(), getRhs(), getTransposeLhs(),
                                   getTransposeRhs());
}
Type MatmulBiasGeluOp::inferSplitResultType() {
  return MatmulOp::inferResultType(getLhs(), getRhs(), getTransposeLhs(),
                                   getTransposeRhs());
}
// A loss and a column sum add the rows up: their result keeps its type.
Type SoftmaxCrossEntropyOp::inferSplitResultType() { return getType(); }
Type SumRowsOp::inferSplitResultType() { return getType(); }

#define GET_OP_CLASSES
#include "dialects/nn/NNOps.cpp.inc"
