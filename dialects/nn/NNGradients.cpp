//===- NNGradients.cpp - reverse-mode rules of the nn ops -----------------===//
//
// Each rule receives the gradient of the loss with respect to the op's result
// and emits the gradients with respect to its operands. The rules are the
// whole of what nn-autodiff knows about individual ops.
//
//===----------------------------------------------------------------------===//
#include "dialects/nn/NNDialect.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace zero::nn;

/// The gradients of `a` and `b` in C = op(a) op(b), given dC.
static SmallVector<Value> matmulGradients(OpBuilder &b, Location loc, Value dC,
                                          Value a, Value bMat, bool ta,
                                          bool tb) {
  // dA and dB follow from dC by transposing the product; each case is
  // chosen so that no explicit transpose is needed.
  Value dA, dB;
  if (!ta && !tb) { // C = A B
    dA = MatmulOp::create(b, loc, dC, bMat, false, true);
    dB = MatmulOp::create(b, loc, a, dC, true, false);
  } else if (ta && !tb) { // C = A^T B
    dA = MatmulOp::create(b, loc, bMat, dC, false, true);
    dB = MatmulOp::create(b, loc, a, dC, false, false);
  } else if (!ta && tb) { // C = A B^T
    dA = MatmulOp::create(b, loc, dC, bMat, false, false);
    dB = MatmulOp::create(b, loc, dC, a, true, false);
  } else { // C = A^T B^T
    dA = MatmulOp::create(b, loc, bMat, dC, true, true);
    dB = MatmulOp::create(b, loc, dC, a, true, true);
  }
  return {dA, dB};
}

SmallVector<Value> MatmulOp::buildGradients(OpBuilder &b,
                                            ValueRange resultGrads) {
  return matmulGradients(b, getLoc(), resultGrads[0], getLhs(), getRhs(),
                         getTransposeLhs(), getTransposeRhs());
}

SmallVector<Value> MatmulBiasOp::buildGradients(OpBuilder &b,
                                                ValueRange resultGrads) {
  Value dY = resultGrads[0];
  SmallVector<Value> grads =
      matmulGradients(b, getLoc(), dY, getLhs(), getRhs(), getTransposeLhs(),
                      getTransposeRhs());
  grads.push_back(SumRowsOp::create(b, getLoc(), dY));
  return grads;
}

SmallVector<Value> MatmulBiasGeluOp::buildGradients(OpBuilder &b,
                                                    ValueRange resultGrads) {
  Location loc = getLoc();
  Value dPre = GeluGradOp::create(b, loc, getPreActivation(), resultGrads[1]);
  // A zero splat is autodiff's gradient of a result nothing reads.
  if (!matchPattern(resultGrads[0], m_AnyZeroFloat()))
    dPre = AddOp::create(b, loc, dPre, resultGrads[0]);
  SmallVector<Value> grads = matmulGradients(
      b, loc, dPre, getLhs(), getRhs(), getTransposeLhs(), getTransposeRhs());
  grads.push_back(SumRowsOp::create(b, loc, dPre));
  return grads;
}

SmallVector<Value> BiasAddOp::buildGradients(OpBuilder &b,
                                             ValueRange resultGrads) {
  Value dy = resultGrads[0];
  return {dy, SumRowsOp::create(b, getLoc(), dy)};
}

SmallVector<Value> AddOp::buildGradients(OpBuilder &, ValueRange resultGrads) {
  return {resultGrads[0], resultGrads[0]};
}

SmallVector<Value> ReluOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads) {
  return {ReluGradOp::create(b, getLoc(), getInput(), resultGrads[0])};
}

SmallVector<Value> GeluOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads) {
  return {GeluGradOp::create(b, getLoc(), getInput(), resultGrads[0])};
}

SmallVector<Value>
SoftmaxCrossEntropyOp::buildGradients(OpBuilder &b, ValueRange resultGrads) {
  Value dLogits = SoftmaxCrossEntropyGradOp::create(
      b, getLoc(), getLogits().getType(), getLogits(), getLabels(),
      resultGrads[0], b.getI64IntegerAttr(getEffectiveDivisor()));
  return {dLogits, Value()}; // Integer labels have no gradient.
}

//===----------------------------------------------------------------------===//
// Transformer ops
//===----------------------------------------------------------------------===//

SmallVector<Value> EmbeddingOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  Value dTable = EmbeddingGradOp::create(b, getLoc(), getTable().getType(),
                                         getIds(), resultGrads[0]);
  return {Value(), dTable}; // Integer ids have no gradient.
}

SmallVector<Value> LayerNormOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  auto grad = LayerNormGradOp::create(
      b, getLoc(), getInput().getType(), getGamma().getType(),
      getGamma().getType(), getInput(), getGamma(), resultGrads[0],
      getEpsilonAttr());
  return {grad.getInputGrad(), grad.getGammaGrad(), grad.getBetaGrad()};
}

SmallVector<Value> RmsNormOp::buildGradients(OpBuilder &b,
                                             ValueRange resultGrads) {
  auto grad = RmsNormGradOp::create(b, getLoc(), getInput().getType(),
                                    getGamma().getType(), getInput(),
                                    getGamma(), resultGrads[0],
                                    getEpsilonAttr());
  return {grad.getInputGrad(), grad.getGammaGrad()};
}

SmallVector<Value> SwigluOp::buildGradients(OpBuilder &b,
                                            ValueRange resultGrads) {
  Type type = getGate().getType();
  auto grad = SwigluGradOp::create(b, getLoc(), type, type, getGate(), getUp(),
                                   resultGrads[0]);
  return {grad.getGateGrad(), grad.getUpGrad()};
}

SmallVector<Value> RopeOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads) {
  // A rotation's transpose is the opposite rotation.
  auto inverse = RopeOp::create(b, getLoc(), getType(), resultGrads[0],
                                getOperation()->getAttrs());
  inverse.setInverse(!getInverse());
  return {inverse};
}

SmallVector<Value> AttentionOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  auto grad = AttentionGradOp::create(
      b, getLoc(), getQuery().getType(), getKey().getType(),
      getValue().getType(), getQuery(), getKey(), getValue(), resultGrads[0],
      getNumHeadsAttr(), getNumKvHeadsAttr(), getSeqLenAttr());
  return {grad.getQueryGrad(), grad.getKeyGrad(), grad.getValueGrad()};
}

SmallVector<Value> SliceColsOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  return {SliceColsGradOp::create(b, getLoc(), getInput().getType(),
                                  resultGrads[0], getOffsetAttr())};
}

SmallVector<Value> CastOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads) {
  return {CastOp::create(b, getLoc(), getInput().getType(), resultGrads[0])};
}
