//===- LowerKernels.cpp - nn ops to zrt kernels ----------------------------===//
//
// The pattern family of zero-lower-to-runtime for the nn dialect: each op
// becomes the zrt kernel of the same computation on the buffers of its
// operands and results (StepLowering.h chooses those). Sizes are not
// passed: the zrt ops read them from the buffers' types.
//
//===----------------------------------------------------------------------===//
#include "passes/StepLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zero;

namespace {
using MemCategory = zrt::MemCategory;

/// Lowers one nn op (or a tensor constant) with the builder of `lowering`.
class KernelLowering {
public:
  KernelLowering(StepLowering &lowering, Operation *op)
      : l(lowering), b(lowering.builder()), loc(op->getLoc()) {}

  std::optional<LogicalResult> lower(Operation *op);

private:
  StepLowering &l;
  OpBuilder &b;
  Location loc;

  Value buf(Value tensor) { return l.buf(tensor); }
  Value out(Value tensor, Value inPlace = nullptr) {
    return l.result(tensor, inPlace);
  }
  static FloatAttr f32(OpBuilder &b, const APFloat &value) {
    return b.getF32FloatAttr(value.convertToFloat());
  }

  nn::SoftmaxCrossEntropyGradOp fusedGradient(nn::SoftmaxCrossEntropyOp loss);
  nn::SoftmaxCrossEntropyOp fusedLoss(nn::SoftmaxCrossEntropyGradOp grad);
  LogicalResult lowerConstant(arith::ConstantOp constant);
  LogicalResult lowerCast(nn::CastOp castOp);
  LogicalResult lowerAdamW(nn::AdamWOp update);
};

/// The gradient `loss` is computed together with (zrt.softmax_xent_fused,
/// at the gradient's place): the nn.softmax_cross_entropy_grad of the same
/// logits, labels and divisor after it, when nothing reads the loss before
/// that gradient. The loss's buffer is still allocated at the loss, so
/// memory is charged as without the fusion.
nn::SoftmaxCrossEntropyGradOp
KernelLowering::fusedGradient(nn::SoftmaxCrossEntropyOp loss) {
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
nn::SoftmaxCrossEntropyOp
KernelLowering::fusedLoss(nn::SoftmaxCrossEntropyGradOp grad) {
  for (Operation *user : grad.getLogits().getUsers())
    if (auto loss = dyn_cast<nn::SoftmaxCrossEntropyOp>(user))
      if (fusedGradient(loss) == grad)
        return loss;
  return {};
}

LogicalResult KernelLowering::lowerConstant(arith::ConstantOp constant) {
  auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
  if (!splat || !isa<FloatType>(splat.getElementType()))
    return constant.emitOpError("cannot be lowered to the runtime: only "
                                "float splat tensor constants are supported");
  Value dst = out(constant);
  zrt::FillOp::create(
      b, loc, dst,
      b.getF32FloatAttr(splat.getSplatValue<APFloat>().convertToDouble()));
  return success();
}

/// The optimizer casts the new master to the parameter: in place of the
/// parameter when it is whole or a shard of its own (stages 0, 3), else
/// into a staging shard that is gathered (stages 1, 2).
LogicalResult KernelLowering::lowerCast(nn::CastOp castOp) {
  MemCategory category = l.isGradient(castOp.getResult())
                             ? MemCategory::Grad
                             : MemCategory::Activation;
  if (castOp.getInput().getDefiningOp<nn::AdamWOp>())
    category = llvm::all_of(castOp->getUsers(),
                            [](Operation *user) {
                              return isa<sharding::AllGatherOp,
                                         sharding::AllGatherStartOp>(user);
                            })
                   ? MemCategory::Comm
                   : MemCategory::Param;
  Value dst = l.bufferFor(castOp, category);
  zrt::CastOp::create(b, loc, buf(castOp.getInput()), dst);
  return success();
}

LogicalResult KernelLowering::lowerAdamW(nn::AdamWOp update) {
  Value p = l.bufferFor(update.getNewParam(), MemCategory::Optimizer,
                        update.getParam());
  Value m = l.bufferFor(update.getNewExpAvg(), MemCategory::Optimizer,
                        update.getExpAvg());
  Value v = l.bufferFor(update.getNewExpAvgSq(), MemCategory::Optimizer,
                        update.getExpAvgSq());
  Value scale = update.getGradScale() ? buf(update.getGradScale()) : Value();
  zrt::AdamWOp::create(b, loc, buf(update.getParam()), buf(update.getGrad()),
                       buf(update.getExpAvg()), buf(update.getExpAvgSq()), p,
                       m, v, buf(update.getLr()), buf(update.getStep()),
                       buf(update.getBeta1()), buf(update.getBeta2()),
                       buf(update.getEps()), buf(update.getWeightDecay()),
                       scale);
  return success();
}

std::optional<LogicalResult> KernelLowering::lower(Operation *op) {
  using Result = std::optional<LogicalResult>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](arith::ConstantOp constant) { return lowerConstant(constant); })
      .Case([&](nn::MatmulOp mm) {
        Value c = out(mm);
        zrt::MatmulOp::create(b, loc, buf(mm.getLhs()), buf(mm.getRhs()), c,
                              mm.getTransposeLhs(), mm.getTransposeRhs());
        return success();
      })
      .Case<nn::MatmulBiasOp, nn::MatmulBiasGeluOp>([&](auto linear) {
        bool gelu = isa<nn::MatmulBiasGeluOp>(op);
        Value pre = gelu ? out(op->getResult(0)) : Value();
        Value c = out(linear.getResult());
        zrt::MatmulBiasOp::create(
            b, loc, buf(linear.getLhs()), buf(linear.getRhs()),
            buf(linear.getBias()), c, pre, linear.getTransposeLhs(),
            linear.getTransposeRhs(),
            gelu ? zrt::Epilogue::BiasGelu : zrt::Epilogue::Bias);
        return success();
      })
      .Case([&](nn::BiasAddOp add) {
        Value y = out(add, add.getInput());
        zrt::BiasAddOp::create(b, loc, buf(add.getInput()), buf(add.getBias()),
                               y);
        return success();
      })
      .Case([&](nn::SumRowsOp sum) {
        Value y = out(sum);
        zrt::SumRowsOp::create(b, loc, buf(sum.getInput()), y);
        return success();
      })
      .Case([&](nn::AddOp add) {
        Value y = out(add, add.getLhs());
        zrt::AddOp::create(b, loc, buf(add.getLhs()), buf(add.getRhs()), y);
        return success();
      })
      .Case([&](nn::ReluOp relu) {
        Value y = out(relu);
        zrt::ReluOp::create(b, loc, buf(relu.getInput()), y);
        return success();
      })
      .Case([&](nn::GeluOp gelu) {
        Value y = out(gelu);
        zrt::GeluOp::create(b, loc, buf(gelu.getInput()), y);
        return success();
      })
      .Case([&](nn::ReluGradOp grad) {
        Value dx = out(grad, grad.getResultGrad());
        zrt::ReluGradOp::create(b, loc, buf(grad.getInput()),
                                buf(grad.getResultGrad()), dx);
        return success();
      })
      .Case([&](nn::GeluGradOp grad) {
        Value dx = out(grad, grad.getResultGrad());
        zrt::GeluGradOp::create(b, loc, buf(grad.getInput()),
                                buf(grad.getResultGrad()), dx);
        return success();
      })
      .Case([&](nn::SwigluOp glu) {
        Value y = out(glu);
        zrt::SwigluOp::create(b, loc, buf(glu.getGate()), buf(glu.getUp()), y);
        return success();
      })
      .Case([&](nn::SwigluGradOp grad) {
        Value dGate = out(grad.getGateGrad());
        Value dUp = out(grad.getUpGrad());
        zrt::SwigluGradOp::create(b, loc, buf(grad.getGate()),
                                  buf(grad.getUp()), buf(grad.getResultGrad()),
                                  dGate, dUp);
        return success();
      })
      .Case([&](nn::SoftmaxCrossEntropyOp loss) {
        Value y = out(loss);
        // Fused with its gradient, the loss is written there.
        if (!fusedGradient(loss))
          zrt::SoftmaxXentOp::create(
              b, loc, buf(loss.getLogits()), buf(loss.getLabels()), y,
              b.getF32FloatAttr(loss.getEffectiveDivisor()));
        return success();
      })
      .Case([&](nn::SoftmaxCrossEntropyGradOp grad) {
        Value dLogits = out(grad);
        if (nn::SoftmaxCrossEntropyOp loss = fusedLoss(grad))
          zrt::SoftmaxXentFusedOp::create(
              b, loc, buf(grad.getLogits()), buf(grad.getLabels()),
              buf(grad.getLossGrad()), buf(loss), dLogits,
              b.getF32FloatAttr(grad.getDivisor()));
        else
          zrt::SoftmaxXentGradOp::create(
              b, loc, buf(grad.getLogits()), buf(grad.getLabels()),
              buf(grad.getLossGrad()), dLogits,
              b.getF32FloatAttr(grad.getDivisor()));
        return success();
      })
      .Case([&](nn::EmbeddingOp lookup) {
        Value y = out(lookup);
        zrt::EmbeddingOp::create(b, loc, buf(lookup.getIds()),
                                 buf(lookup.getTable()), y);
        return success();
      })
      .Case([&](nn::EmbeddingGradOp grad) {
        Value dTable = out(grad);
        zrt::EmbeddingGradOp::create(b, loc, buf(grad.getIds()),
                                     buf(grad.getResultGrad()), dTable);
        return success();
      })
      .Case([&](nn::LayerNormOp norm) {
        Value y = out(norm);
        zrt::LayerNormOp::create(b, loc, buf(norm.getInput()),
                                 buf(norm.getGamma()), buf(norm.getBeta()), y,
                                 f32(b, norm.getEpsilon()));
        return success();
      })
      .Case([&](nn::LayerNormGradOp grad) {
        Value dx = out(grad.getInputGrad());
        Value dGamma = out(grad.getGammaGrad());
        Value dBeta = out(grad.getBetaGrad());
        zrt::LayerNormGradOp::create(
            b, loc, buf(grad.getInput()), buf(grad.getGamma()),
            buf(grad.getResultGrad()), dx, dGamma, dBeta,
            f32(b, grad.getEpsilon()));
        return success();
      })
      .Case([&](nn::RmsNormOp norm) {
        Value y = out(norm);
        zrt::RmsNormOp::create(b, loc, buf(norm.getInput()),
                               buf(norm.getGamma()), y,
                               f32(b, norm.getEpsilon()));
        return success();
      })
      .Case([&](nn::RmsNormGradOp grad) {
        Value dx = out(grad.getInputGrad());
        Value dGamma = out(grad.getGammaGrad());
        zrt::RmsNormGradOp::create(b, loc, buf(grad.getInput()),
                                   buf(grad.getGamma()),
                                   buf(grad.getResultGrad()), dx, dGamma,
                                   f32(b, grad.getEpsilon()));
        return success();
      })
      .Case([&](nn::RopeOp rope) {
        Value y = out(rope, rope.getInput());
        zrt::RopeOp::create(b, loc, buf(rope.getInput()), y, rope.getSeqLen(),
                            rope.getNumHeads(), rope.getInverseFrequencies(),
                            rope.getInverse());
        return success();
      })
      .Case([&](nn::AttentionOp attn) {
        Value y = out(attn);
        zrt::AttentionOp::create(b, loc, buf(attn.getQuery()),
                                 buf(attn.getKey()), buf(attn.getValue()), y,
                                 attn.getSeqLen(), attn.getNumHeads(),
                                 attn.getNumKvHeads());
        return success();
      })
      .Case([&](nn::AttentionGradOp grad) {
        Value dq = out(grad.getQueryGrad());
        Value dk = out(grad.getKeyGrad());
        Value dv = out(grad.getValueGrad());
        zrt::AttentionGradOp::create(
            b, loc, buf(grad.getQuery()), buf(grad.getKey()),
            buf(grad.getValue()), buf(grad.getResultGrad()), dq, dk, dv,
            grad.getSeqLen(), grad.getNumHeads(), grad.getNumKvHeads());
        return success();
      })
      .Case([&](nn::SliceColsOp slice) {
        Value y = out(slice);
        zrt::SliceColsOp::create(b, loc, buf(slice.getInput()), y,
                                 slice.getOffset());
        return success();
      })
      .Case([&](nn::SliceColsGradOp grad) {
        Value dx = out(grad);
        zrt::SliceColsGradOp::create(b, loc, buf(grad.getResultGrad()), dx,
                                     grad.getOffset());
        return success();
      })
      .Case([&](nn::CastOp castOp) { return lowerCast(castOp); })
      .Case([&](nn::SumSquaresOp sum) {
        Value y = out(sum);
        zrt::SumSquaresOp::create(b, loc, buf(sum.getInput()), y);
        if (std::optional<StringRef> param = sum.getParam())
          zrt::WatchGradientOp::create(b, loc, y, *param);
        return success();
      })
      .Case([&](nn::ClipCoefficientOp clip) {
        Value y = out(clip);
        zrt::ClipCoefficientOp::create(b, loc, buf(clip.getTotalSq()),
                                       buf(clip.getMaxNorm()), y);
        return success();
      })
      .Case([&](nn::AdamWOp update) { return lowerAdamW(update); })
      .Default([](Operation *) { return std::nullopt; });
}
} // namespace

std::optional<LogicalResult> zero::lowerKernelOp(StepLowering &lowering,
                                                 Operation *op) {
  return KernelLowering(lowering, op).lower(op);
}
