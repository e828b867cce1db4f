//===- Kernels.cpp - nn ops to zrt kernels --------------------------------===//
//
// The pattern family of zero-lower-to-zrt for the nn dialect: each op
// becomes the zrt kernel of the same computation on its operands' buffers
// (from the adaptor) and its results' buffers (chosen by the buffer
// assignment, StepLowering.h). Sizes are not passed: the zrt ops read them
// from the buffers' types.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/ZeroToZrt/ZeroToZrt.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace zero;

namespace {
using MemCategory = zrt::MemCategory;

FloatAttr f32(OpBuilder &b, const APFloat &value) {
  return b.getF32FloatAttr(value.convertToFloat());
}

/// The gradient `loss` is computed together with (zrt.softmax_xent_fused,
/// at the gradient's place): the nn.softmax_cross_entropy_grad of the same
/// logits, labels and divisor after it, when nothing reads the loss before
/// that gradient. The loss's buffer is still allocated at the loss, so
/// memory is charged as without the fusion.
nn::SoftmaxCrossEntropyGradOp fusedGradient(const StepLowering &l,
                                            nn::SoftmaxCrossEntropyOp loss) {
  for (Operation *user : loss.getLogits().getUsers()) {
    auto grad = dyn_cast<nn::SoftmaxCrossEntropyGradOp>(user);
    if (!grad || grad->getBlock() != loss->getBlock() ||
        grad.getLabels() != loss.getLabels() ||
        int64_t(grad.getDivisor()) != loss.getEffectiveDivisor() ||
        l.positionOf(grad) < l.positionOf(loss))
      continue;
    unsigned at = l.positionOf(grad);
    if (llvm::none_of(loss->getUsers(), [&](Operation *reader) {
          return l.positionOf(reader) <= at;
        }))
      return grad;
  }
  return {};
}

/// The loss `grad` is computed together with, if any (fusedGradient).
nn::SoftmaxCrossEntropyOp fusedLoss(const StepLowering &l,
                                    nn::SoftmaxCrossEntropyGradOp grad) {
  for (Operation *user : grad.getLogits().getUsers())
    if (auto loss = dyn_cast<nn::SoftmaxCrossEntropyOp>(user))
      if (fusedGradient(l, loss) == grad)
        return loss;
  return {};
}

/// nn.matmul_bias and nn.matmul_bias_gelu: one GEMM with its epilogue; the
/// GELU form also keeps the pre-activation for the backward.
template <typename LinearOp>
void lowerLinear(StepLowering &l, LinearOp linear, typename LinearOp::Adaptor a,
                 OpBuilder &b) {
  constexpr bool gelu = std::is_same_v<LinearOp, nn::MatmulBiasGeluOp>;
  Operation *op = linear.getOperation();
  Value pre = gelu ? l.result(op->getResult(0)) : Value();
  Value c = l.result(linear.getResult());
  zrt::MatmulBiasOp::create(
      b, linear.getLoc(), a.getLhs(), a.getRhs(), a.getBias(), c, pre,
      linear.getTransposeLhs(), linear.getTransposeRhs(),
      gelu ? zrt::Epilogue::BiasGelu : zrt::Epilogue::Bias);
}
} // namespace

// The lowering of each op: its StepPattern's lower().
namespace zero {

/// A float splat (checkLowerable refused every other constant).
template <>
void StepPattern<arith::ConstantOp>::lower(arith::ConstantOp constant, Adaptor,
                                           OpBuilder &b) const {
  auto splat = cast<SplatElementsAttr>(constant.getValue());
  Value dst = out(constant);
  // An exact accumulator's constant is zero (checkLowerable).
  double value = isa<FloatType>(splat.getElementType())
                     ? splat.getSplatValue<APFloat>().convertToDouble()
                     : 0.0;
  zrt::FillOp::create(b, constant.getLoc(), dst, b.getF32FloatAttr(value));
}

template <>
void StepPattern<nn::MatmulOp>::lower(nn::MatmulOp mm, Adaptor a,
                                      OpBuilder &b) const {
  Value c = out(mm);
  zrt::MatmulOp::create(b, mm.getLoc(), a.getLhs(), a.getRhs(), c,
                        mm.getTransposeLhs(), mm.getTransposeRhs());
}

template <>
void StepPattern<nn::MatmulBiasOp>::lower(nn::MatmulBiasOp linear, Adaptor a,
                                          OpBuilder &b) const {
  lowerLinear(l, linear, a, b);
}

template <>
void StepPattern<nn::MatmulBiasGeluOp>::lower(nn::MatmulBiasGeluOp linear,
                                              Adaptor a, OpBuilder &b) const {
  lowerLinear(l, linear, a, b);
}

template <>
void StepPattern<nn::BiasAddOp>::lower(nn::BiasAddOp add, Adaptor a,
                                       OpBuilder &b) const {
  Value y = out(add, add.getInput());
  zrt::BiasAddOp::create(b, add.getLoc(), a.getInput(), a.getBias(), y);
}

template <>
void StepPattern<nn::SumRowsOp>::lower(nn::SumRowsOp sum, Adaptor a,
                                       OpBuilder &b) const {
  Value y = out(sum);
  zrt::SumRowsOp::create(b, sum.getLoc(), a.getInput(), y);
}

template <>
void StepPattern<nn::AddOp>::lower(nn::AddOp add, Adaptor a,
                                   OpBuilder &b) const {
  Value y = out(add, add.getLhs());
  zrt::AddOp::create(b, add.getLoc(), a.getLhs(), a.getRhs(), y);
}

template <>
void StepPattern<nn::ReluOp>::lower(nn::ReluOp relu, Adaptor a,
                                    OpBuilder &b) const {
  Value y = out(relu);
  zrt::ReluOp::create(b, relu.getLoc(), a.getInput(), y);
}

template <>
void StepPattern<nn::GeluOp>::lower(nn::GeluOp gelu, Adaptor a,
                                    OpBuilder &b) const {
  Value y = out(gelu);
  zrt::GeluOp::create(b, gelu.getLoc(), a.getInput(), y);
}

template <>
void StepPattern<nn::ReluGradOp>::lower(nn::ReluGradOp grad, Adaptor a,
                                        OpBuilder &b) const {
  Value dx = out(grad, grad.getResultGrad());
  zrt::ReluGradOp::create(b, grad.getLoc(), a.getInput(), a.getResultGrad(),
                          dx);
}

template <>
void StepPattern<nn::GeluGradOp>::lower(nn::GeluGradOp grad, Adaptor a,
                                        OpBuilder &b) const {
  Value dx = out(grad, grad.getResultGrad());
  zrt::GeluGradOp::create(b, grad.getLoc(), a.getInput(), a.getResultGrad(),
                          dx);
}

template <>
void StepPattern<nn::SwigluOp>::lower(nn::SwigluOp glu, Adaptor a,
                                      OpBuilder &b) const {
  Value y = out(glu);
  zrt::SwigluOp::create(b, glu.getLoc(), a.getGate(), a.getUp(), y);
}

template <>
void StepPattern<nn::SwigluGradOp>::lower(nn::SwigluGradOp grad, Adaptor a,
                                          OpBuilder &b) const {
  Value dGate = out(grad.getGateGrad());
  Value dUp = out(grad.getUpGrad());
  zrt::SwigluGradOp::create(b, grad.getLoc(), a.getGate(), a.getUp(),
                            a.getResultGrad(), dGate, dUp);
}

template <>
void StepPattern<nn::SoftmaxCrossEntropyOp>::lower(
    nn::SoftmaxCrossEntropyOp loss, Adaptor a, OpBuilder &b) const {
  Value y = out(loss);
  // Fused with its gradient, the loss is written there.
  if (!fusedGradient(l, loss))
    zrt::SoftmaxXentOp::create(b, loss.getLoc(), a.getLogits(), a.getLabels(),
                               y,
                               b.getF32FloatAttr(loss.getEffectiveDivisor()));
}

template <>
void StepPattern<nn::SoftmaxCrossEntropyGradOp>::lower(
    nn::SoftmaxCrossEntropyGradOp grad, Adaptor a, OpBuilder &b) const {
  Value dLogits = out(grad);
  FloatAttr divisor = b.getF32FloatAttr(grad.getDivisor());
  if (nn::SoftmaxCrossEntropyOp loss = fusedLoss(l, grad))
    zrt::SoftmaxXentFusedOp::create(b, grad.getLoc(), a.getLogits(),
                                    a.getLabels(), a.getLossGrad(), l.buf(loss),
                                    dLogits, divisor);
  else
    zrt::SoftmaxXentGradOp::create(b, grad.getLoc(), a.getLogits(),
                                   a.getLabels(), a.getLossGrad(), dLogits,
                                   divisor);
}

template <>
void StepPattern<nn::EmbeddingOp>::lower(nn::EmbeddingOp lookup, Adaptor a,
                                         OpBuilder &b) const {
  Value y = out(lookup);
  zrt::EmbeddingOp::create(b, lookup.getLoc(), a.getIds(), a.getTable(), y);
}

template <>
void StepPattern<nn::EmbeddingGradOp>::lower(nn::EmbeddingGradOp grad,
                                             Adaptor a, OpBuilder &b) const {
  Value dTable = out(grad);
  zrt::EmbeddingGradOp::create(b, grad.getLoc(), a.getIds(), a.getResultGrad(),
                               dTable);
}

template <>
void StepPattern<nn::LayerNormOp>::lower(nn::LayerNormOp norm, Adaptor a,
                                         OpBuilder &b) const {
  Value y = out(norm);
  zrt::LayerNormOp::create(b, norm.getLoc(), a.getInput(), a.getGamma(),
                           a.getBeta(), y, f32(b, norm.getEpsilon()));
}

template <>
void StepPattern<nn::LayerNormGradOp>::lower(nn::LayerNormGradOp grad,
                                             Adaptor a, OpBuilder &b) const {
  Value dx = out(grad.getInputGrad());
  Value dGamma = out(grad.getGammaGrad());
  Value dBeta = out(grad.getBetaGrad());
  zrt::LayerNormGradOp::create(b, grad.getLoc(), a.getInput(), a.getGamma(),
                               a.getResultGrad(), dx, dGamma, dBeta,
                               f32(b, grad.getEpsilon()));
}

template <>
void StepPattern<nn::RmsNormOp>::lower(nn::RmsNormOp norm, Adaptor a,
                                       OpBuilder &b) const {
  Value y = out(norm);
  zrt::RmsNormOp::create(b, norm.getLoc(), a.getInput(), a.getGamma(), y,
                         f32(b, norm.getEpsilon()));
}

template <>
void StepPattern<nn::RmsNormGradOp>::lower(nn::RmsNormGradOp grad, Adaptor a,
                                           OpBuilder &b) const {
  Value dx = out(grad.getInputGrad());
  Value dGamma = out(grad.getGammaGrad());
  zrt::RmsNormGradOp::create(b, grad.getLoc(), a.getInput(), a.getGamma(),
                             a.getResultGrad(), dx, dGamma,
                             f32(b, grad.getEpsilon()));
}

template <>
void StepPattern<nn::RopeOp>::lower(nn::RopeOp rope, Adaptor a,
                                    OpBuilder &b) const {
  Value y = out(rope, rope.getInput());
  zrt::RopeOp::create(b, rope.getLoc(), a.getInput(), y, rope.getSeqLen(),
                      rope.getNumHeads(), rope.getInverseFrequencies(),
                      rope.getInverse());
}

template <>
void StepPattern<nn::AttentionOp>::lower(nn::AttentionOp attn, Adaptor a,
                                         OpBuilder &b) const {
  Value y = out(attn);
  zrt::AttentionOp::create(b, attn.getLoc(), a.getQuery(), a.getKey(),
                           a.getValue(), y, attn.getSeqLen(),
                           attn.getNumHeads(), attn.getNumKvHeads());
}

template <>
void StepPattern<nn::AttentionGradOp>::lower(nn::AttentionGradOp grad,
                                             Adaptor a, OpBuilder &b) const {
  Value dq = out(grad.getQueryGrad());
  Value dk = out(grad.getKeyGrad());
  Value dv = out(grad.getValueGrad());
  zrt::AttentionGradOp::create(b, grad.getLoc(), a.getQuery(), a.getKey(),
                               a.getValue(), a.getResultGrad(), dq, dk, dv,
                               grad.getSeqLen(), grad.getNumHeads(),
                               grad.getNumKvHeads());
}

template <>
void StepPattern<nn::SliceColsOp>::lower(nn::SliceColsOp slice, Adaptor a,
                                         OpBuilder &b) const {
  Value y = out(slice);
  zrt::SliceColsOp::create(b, slice.getLoc(), a.getInput(), y,
                           slice.getOffset());
}

template <>
void StepPattern<nn::SliceColsGradOp>::lower(nn::SliceColsGradOp grad,
                                             Adaptor a, OpBuilder &b) const {
  Value dx = out(grad);
  zrt::SliceColsGradOp::create(b, grad.getLoc(), a.getResultGrad(), dx,
                               grad.getOffset());
}

/// The optimizer casts the new master to the parameter: in place of the
/// parameter when it is whole or a shard of its own (stages 0, 3), else
/// into a staging shard that is gathered (stages 1, 2).
template <>
void StepPattern<nn::CastOp>::lower(nn::CastOp castOp, Adaptor a,
                                    OpBuilder &b) const {
  MemCategory category = l.isGradient(castOp.getResult())
                             ? MemCategory::Grad
                             : MemCategory::Activation;
  if (castOp.getInput().getDefiningOp<nn::AdamWOp>())
    category =
        llvm::all_of(
            castOp->getUsers(),
            [](Operation *user) {
              return isa<sharding::AllGatherOp, sharding::AllGatherStartOp>(
                  user);
            })
            ? MemCategory::Comm
            : MemCategory::Param;
  bool onHost = castOp->hasAttr(sharding::kHostAttrName);
  if (onHost)
    category = MemCategory::HostStaging;
  Value dst = l.bufferFor(castOp, category);
  zrt::CastOp::create(b, castOp.getLoc(), a.getInput(), dst, onHost);
}

template <>
void StepPattern<nn::SumSquaresOp>::lower(nn::SumSquaresOp sum, Adaptor a,
                                          OpBuilder &b) const {
  Value y = out(sum);
  zrt::SumSquaresOp::create(b, sum.getLoc(), a.getInput(), y);
  if (std::optional<StringRef> param = sum.getParam())
    zrt::WatchGradientOp::create(b, sum.getLoc(), y, *param);
}

/// The exact sums update their accumulator in place: into its own buffer
/// when it dies here (an accumulator argument, a fresh zero), else into a
/// copy of it.
static Value exactAccumulatorBuffer(StepLowering &l, OpBuilder &b, Value result,
                                    Value accTensor, Value accBuffer) {
  Value y = l.result(result, accTensor);
  if (y != accBuffer)
    zrt::CopyOp::create(b, result.getLoc(), accBuffer, y, zrt::getByteSize(y),
                        /*src_offset=*/0,
                        /*dst_offset=*/0);
  return y;
}

template <>
void StepPattern<nn::AccumulateExactOp>::lower(nn::AccumulateExactOp acc,
                                               Adaptor a, OpBuilder &b) const {
  Value y =
      exactAccumulatorBuffer(l, b, acc.getResult(), acc.getAcc(), a.getAcc());
  zrt::AccumulateExactOp::create(b, acc.getLoc(), a.getInput(), y);
}

template <>
void StepPattern<nn::SumSquaresExactOp>::lower(nn::SumSquaresExactOp sum,
                                               Adaptor a, OpBuilder &b) const {
  Value y =
      exactAccumulatorBuffer(l, b, sum.getResult(), sum.getAcc(), a.getAcc());
  zrt::SumSquaresExactOp::create(b, sum.getLoc(), a.getInput(), y);
}

template <>
void StepPattern<nn::FromExactOp>::lower(nn::FromExactOp from, Adaptor a,
                                         OpBuilder &b) const {
  zrt::FromExactOp::create(b, from.getLoc(), a.getInput(), out(from));
}

template <>
void StepPattern<nn::ClipCoefficientOp>::lower(nn::ClipCoefficientOp clip,
                                               Adaptor a, OpBuilder &b) const {
  Value y = out(clip);
  zrt::ClipCoefficientOp::create(b, clip.getLoc(), a.getTotalSq(),
                                 a.getMaxNorm(), y);
}

/// AdamW updates the master and both moments in place; on the host
/// (optimizer offload) in host memory.
template <>
void StepPattern<nn::AdamWOp>::lower(nn::AdamWOp update, Adaptor a,
                                     OpBuilder &b) const {
  bool onHost = update->hasAttr(sharding::kHostAttrName);
  MemCategory category =
      onHost ? MemCategory::HostStaging : MemCategory::Optimizer;
  Value p = l.bufferFor(update.getNewParam(), category, update.getParam());
  Value m = l.bufferFor(update.getNewExpAvg(), category, update.getExpAvg());
  Value v =
      l.bufferFor(update.getNewExpAvgSq(), category, update.getExpAvgSq());
  zrt::AdamWOp::create(b, update.getLoc(), a.getParam(), a.getGrad(),
                       a.getExpAvg(), a.getExpAvgSq(), p, m, v, a.getLr(),
                       a.getStep(), a.getBeta1(), a.getBeta2(), a.getEps(),
                       a.getWeightDecay(), a.getGradScale(), onHost);
}

/// Lion updates the master and its momentum in place.
template <>
void StepPattern<nn::LionOp>::lower(nn::LionOp update, Adaptor a,
                                    OpBuilder &b) const {
  Value p = l.bufferFor(update.getNewParam(), MemCategory::Optimizer,
                        update.getParam());
  Value m = l.bufferFor(update.getNewExpAvg(), MemCategory::Optimizer,
                        update.getExpAvg());
  zrt::LionOp::create(b, update.getLoc(), a.getParam(), a.getGrad(),
                      a.getExpAvg(), p, m, a.getLr(), a.getBeta1(),
                      a.getBeta2(), a.getWeightDecay(), a.getGradScale());
}
} // namespace zero

void zero::populateKernelLoweringPatterns(RewritePatternSet &patterns,
                                          const TypeConverter &converter,
                                          StepLowering &lowering) {
  patterns.add<
      StepPattern<arith::ConstantOp>, StepPattern<nn::MatmulOp>,
      StepPattern<nn::MatmulBiasOp>, StepPattern<nn::MatmulBiasGeluOp>,
      StepPattern<nn::BiasAddOp>, StepPattern<nn::SumRowsOp>,
      StepPattern<nn::AddOp>, StepPattern<nn::ReluOp>, StepPattern<nn::GeluOp>,
      StepPattern<nn::ReluGradOp>, StepPattern<nn::GeluGradOp>,
      StepPattern<nn::SwigluOp>, StepPattern<nn::SwigluGradOp>,
      StepPattern<nn::SoftmaxCrossEntropyOp>,
      StepPattern<nn::SoftmaxCrossEntropyGradOp>, StepPattern<nn::EmbeddingOp>,
      StepPattern<nn::EmbeddingGradOp>, StepPattern<nn::LayerNormOp>,
      StepPattern<nn::LayerNormGradOp>, StepPattern<nn::RmsNormOp>,
      StepPattern<nn::RmsNormGradOp>, StepPattern<nn::RopeOp>,
      StepPattern<nn::AttentionOp>, StepPattern<nn::AttentionGradOp>,
      StepPattern<nn::SliceColsOp>, StepPattern<nn::SliceColsGradOp>,
      StepPattern<nn::CastOp>, StepPattern<nn::SumSquaresOp>,
      StepPattern<nn::ClipCoefficientOp>, StepPattern<nn::AccumulateExactOp>,
      StepPattern<nn::SumSquaresExactOp>, StepPattern<nn::FromExactOp>,
      StepPattern<nn::AdamWOp>, StepPattern<nn::LionOp>>(converter, lowering);
}
