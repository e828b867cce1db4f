//===- NNTransformerOps.cpp - verifiers of the transformer ops ------------===//
//
// Each verifier checks the labelled constraints of its op's TableGen
// description and names the label in its message.
//
//===----------------------------------------------------------------------===//
#include "dialects/nn/NNDialect.h"

#include <cmath>

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
  constexpr int64_t kMaxHeadDim = 65536;
  if (getHeadDim() > kMaxHeadDim)
    return emitOpError("(C4) the head dimension must be at most ")
           << kMaxHeadDim << ", got " << getHeadDim();
  if (!(getTheta().convertToFloat() > 1.0f))
    return emitOpError("(C2) theta must exceed 1, got ")
           << getTheta().convertToFloat();
  // (C3): which scaling parameters each kind takes.
  StringRef scaling = getScaling().value_or("");
  bool linear = scaling == "linear", llama3 = scaling == "llama3";
  if (!scaling.empty() && !linear && !llama3)
    return emitOpError("(C3) scaling must be \"linear\" or \"llama3\", got \"")
           << scaling << "\"";
  auto present = [&](bool has, StringRef name, bool wanted) -> LogicalResult {
    if (has == wanted)
      return success();
    return emitOpError("(C3) ")
           << (scaling.empty() ? StringRef("no") : scaling) << " scaling "
           << (wanted ? "needs " : "takes no ") << name;
  };
  if (failed(present(getFactor().has_value(), "factor", linear || llama3)) ||
      failed(present(getLowFreqFactor().has_value(), "low_freq_factor",
                     llama3)) ||
      failed(present(getHighFreqFactor().has_value(), "high_freq_factor",
                     llama3)) ||
      failed(present(getOriginalMaxPositions().has_value(),
                     "original_max_positions", llama3)))
    return failure();
  if (getFactor() && !(getFactor()->convertToFloat() > 0.0f))
    return emitOpError("(C3) factor must be positive, got ")
           << getFactor()->convertToFloat();
  if (llama3) {
    float low = getLowFreqFactor()->convertToFloat();
    float high = getHighFreqFactor()->convertToFloat();
    if (!(low > 0.0f && high > low))
      return emitOpError("(C3) llama3 scaling needs 0 < low_freq_factor < "
                         "high_freq_factor, got ")
             << low << " and " << high;
    if (*getOriginalMaxPositions() < 1)
      return emitOpError("(C3) original_max_positions must be positive, got ")
             << *getOriginalMaxPositions();
  }
  return success();
}

// Each step is a float32 operation of its own, in the order of transformers'
// _compute_default_rope_parameters, _compute_linear_scaling_rope_parameters
// and _compute_llama3_parameters (modeling_rope_utils.py), whose Python
// float constants PyTorch rounds to float32 when they meet a float32 tensor.
SmallVector<float> RopeOp::getInverseFrequencies() {
  const int64_t headDim = getHeadDim(), half = headDim / 2;
  const float theta = getTheta().convertToFloat();
  SmallVector<float> invFreq(half);
  for (int64_t i = 0; i < half; ++i)
    invFreq[i] = 1.0f / std::pow(theta, (float)(2 * i) / (float)headDim);
  StringRef scaling = getScaling().value_or("");
  if (scaling.empty())
    return invFreq;
  const float factor = getFactor()->convertToFloat();
  if (scaling == "linear") {
    for (float &f : invFreq)
      f = f / factor;
    return invFreq;
  }
  const double low = getLowFreqFactor()->convertToFloat();
  const double high = getHighFreqFactor()->convertToFloat();
  const double oldContext = (double)*getOriginalMaxPositions();
  const float lowFreqWavelen = (float)(oldContext / low);
  const float highFreqWavelen = (float)(oldContext / high);
  const float twoPi = (float)(2 * M_PI);
  for (float &f : invFreq) {
    const float wavelen = twoPi / f;
    const float scaled = wavelen > lowFreqWavelen ? f / factor : f;
    const float smooth = ((float)oldContext / wavelen - (float)low) /
                         (float)(high - low);
    const float smoothed =
        (1.0f - smooth) * scaled / factor + smooth * scaled;
    const bool medium = !(wavelen < highFreqWavelen) &&
                        !(wavelen > lowFreqWavelen);
    f = medium ? smoothed : scaled;
  }
  return invFreq;
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
  // The end in unsigned arithmetic: the offset is any int64_t the input
  // gives, and its signed sum with the columns may overflow.
  uint64_t end = uint64_t(offset) + uint64_t(colsOf(block));
  if (rowsOf(whole) != rowsOf(block) || offset < 0 ||
      end > uint64_t(colsOf(whole)))
    return op->emitOpError("(C1) columns [")
           << offset << ", " << end << ") of " << whole.getType()
           << " cannot form " << block.getType();
  return success();
}

LogicalResult SliceColsOp::verify() {
  return verifyColumnBlock(*this, getInput(), getResult(), getOffset());
}
LogicalResult SliceColsGradOp::verify() {
  return verifyColumnBlock(*this, getResult(), getResultGrad(), getOffset());
}

LogicalResult AccumulateExactOp::verify() {
  if (getAcc().getType().getShape() != getInput().getType().getShape() ||
      getAcc().getType() != getResult().getType())
    return emitOpError("(C1) the accumulator, the input and the result must "
                       "have the same shape: ")
           << getAcc().getType() << ", " << getInput().getType() << " -> "
           << getResult().getType();
  return success();
}

LogicalResult FromExactOp::verify() {
  if (getInput().getType().getShape() != getResult().getType().getShape())
    return emitOpError("(C1) cannot change the shape: ")
           << getInput().getType() << " -> " << getResult().getType();
  return success();
}

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getResult().getType().getShape())
    return emitOpError("(C1) cannot change the shape: ")
           << getInput().getType() << " -> " << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// BatchSplitOpInterface: the result types zero-split-batch gives
//===----------------------------------------------------------------------===//

/// `type` with `rows` rows (its columns and element type kept).
static Type withRows(Type type, int64_t rows) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] = rows;
  return tensor.clone(shape);
}

// One row per id, a slice or cast of each row of the input.
Type EmbeddingOp::inferSplitResultType() {
  return withRows(getType(), rowsOf(getIds()));
}
Type SliceColsOp::inferSplitResultType() {
  return withRows(getType(), rowsOf(getInput()));
}
Type CastOp::inferSplitResultType() {
  return withRows(getType(), rowsOf(getInput()));
}
