//===- NNTransformerOps.cpp - verifiers of the transformer ops ------------===//
//
// Each verifier checks the labelled constraints of its op's TableGen
// description and names the label in its message.
//
//===----------------------------------------------------------------------===//
#include "dialects/nn/NNDialect.h"

using namespace mlir;
using namespace zero::nn;

static int64_t rowsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape()[0];
}
static int64_t colsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape()[1];
}

/// (C1) of the norms: one gain per column.
static LogicalResult verifyGain(Operation *op, Value input, Value gamma) {
  int64_t size = cast<RankedTensorType>(gamma.getType()).getShape()[0];
  if (size != colsOf(input))
    return op->emitOpError("(C1) gamma has ")
           << size << " elements but the input has " << colsOf(input)
           << " columns";
  return success();
}

LogicalResult EmbeddingOp::verify() {
  auto result = getResult().getType().getShape();
  int64_t ids = getIds().getType().getShape()[0];
  if (result[0] != ids || result[1] != colsOf(getTable()))
    return emitOpError("(C1) result must be ")
           << ids << "x" << colsOf(getTable()) << ", got "
           << getResult().getType();
  return success();
}

LogicalResult EmbeddingGradOp::verify() {
  int64_t ids = getIds().getType().getShape()[0];
  if (rowsOf(getResultGrad()) != ids ||
      colsOf(getResult()) != colsOf(getResultGrad()))
    return emitOpError("(C1) result_grad ")
           << getResultGrad().getType() << " must have " << ids
           << " rows and the columns of the result " << getResult().getType();
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyGain(*this, getInput(), getGamma());
}
LogicalResult LayerNormGradOp::verify() {
  return verifyGain(*this, getInput(), getGamma());
}
LogicalResult RmsNormOp::verify() {
  return verifyGain(*this, getInput(), getGamma());
}
LogicalResult RmsNormGradOp::verify() {
  return verifyGain(*this, getInput(), getGamma());
}

LogicalResult RopeOp::verify() {
  int64_t heads = getNumHeads(), seq = getSeqLen(), cols = colsOf(getInput());
  if (heads < 1 || seq < 1 || rowsOf(getInput()) % seq != 0 ||
      cols % heads != 0 || (cols / heads) % 2 != 0)
    return emitOpError("(C1) ")
           << getInput().getType() << " does not split into sequences of "
           << seq << " rows and " << heads << " heads of an even size";
  return success();
}

/// (C1) and (C2) of nn.attention and nn.attention_grad.
static LogicalResult verifyAttention(Operation *op, Value query, Value key,
                                     int64_t heads, int64_t kvHeads,
                                     int64_t seq) {
  int64_t cols = colsOf(query);
  if (heads < 1 || kvHeads < 1 || cols % heads != 0 || heads % kvHeads != 0)
    return op->emitOpError("(C1) ")
           << heads << " query heads must divide the " << cols
           << " query columns and be a multiple of " << kvHeads
           << " kv heads";
  int64_t headDim = cols / heads;
  if (colsOf(key) != kvHeads * headDim)
    return op->emitOpError("(C2) key columns must be ")
           << kvHeads << " x " << headDim << ", got " << colsOf(key);
  if (rowsOf(key) != rowsOf(query) || seq < 1 || rowsOf(query) % seq != 0)
    return op->emitOpError("(C2) query and key rows (")
           << rowsOf(query) << ", " << rowsOf(key)
           << ") must be equal and divide into sequences of " << seq;
  return success();
}

LogicalResult AttentionOp::verify() {
  return verifyAttention(*this, getQuery(), getKey(), getNumHeads(),
                         getNumKvHeads(), getSeqLen());
}
LogicalResult AttentionGradOp::verify() {
  return verifyAttention(*this, getQuery(), getKey(), getNumHeads(),
                         getNumKvHeads(), getSeqLen());
}

/// (C1) of the column slices: `block` fits in `whole` at `offset`.
static LogicalResult verifyColumnBlock(Operation *op, Value whole, Value block,
                                       int64_t offset) {
  if (rowsOf(whole) != rowsOf(block) || offset < 0 ||
      offset + colsOf(block) > colsOf(whole))
    return op->emitOpError("(C1) columns [")
           << offset << ", " << offset + colsOf(block) << ") of "
           << whole.getType() << " cannot form " << block.getType();
  return success();
}

LogicalResult SliceColsOp::verify() {
  return verifyColumnBlock(*this, getInput(), getResult(), getOffset());
}
LogicalResult SliceColsGradOp::verify() {
  return verifyColumnBlock(*this, getResult(), getResultGrad(), getOffset());
}

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getResult().getType().getShape())
    return emitOpError("(C1) cannot change the shape: ")
           << getInput().getType() << " -> " << getResult().getType();
  return success();
}
