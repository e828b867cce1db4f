//===- Kernels.cpp - zrt kernel ops to calls of zrt.h ---------------------===//
//
// The kernels' part of zero-lower-zrt-to-calls: one ZRT_CALL per op, the
// sizes and dtypes from the buffers' types, in the order of the prototype.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/ZrtToCalls/CallEmitter.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zero::zrt;

namespace zero::zrt_calls {

std::optional<LogicalResult> lowerKernelCall(CallEmitter &emit, Operation *op) {
  auto p = [&](Value buffer) { return emit.ptr(buffer); };
  Location loc = op->getLoc();
  using Result = std::optional<LogicalResult>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](MatmulOp mm) {
        Value a = mm.getA();
        ZRT_CALL(zrt_matmul, dtype(mm.getC()), p(a), p(mm.getB()), p(mm.getC()),
                 dim(mm.getC(), 0), dim(mm.getC(), 1),
                 dim(a, mm.getTransposeA() ? 0 : 1), flag(mm.getTransposeA()),
                 flag(mm.getTransposeB()));
        return Result(success());
      })
      .Case([&](MatmulBiasOp mm) {
        Value a = mm.getA();
        Value pre = mm.getPreActivation() ? p(mm.getPreActivation())
                                          : emit.rt.nullPtr(loc);
        ZRT_CALL(zrt_matmul_bias, dtype(mm.getC()), p(a), p(mm.getB()),
                 p(mm.getBias()), p(mm.getC()), pre, dim(mm.getC(), 0),
                 dim(mm.getC(), 1), dim(a, mm.getTransposeA() ? 0 : 1),
                 flag(mm.getTransposeA()), flag(mm.getTransposeB()),
                 I32{int32_t(mm.getEpilogue())});
        return Result(success());
      })
      .Case([&](BiasAddOp add) {
        ZRT_CALL(zrt_bias_add, dtype(add.getY()), p(add.getX()),
                 p(add.getBias()), p(add.getY()), dim(add.getX(), 0),
                 dim(add.getX(), 1));
        return Result(success());
      })
      .Case([&](SumRowsOp sum) {
        ZRT_CALL(zrt_sum_rows, dtype(sum.getY()), p(sum.getX()), p(sum.getY()),
                 dim(sum.getX(), 0), dim(sum.getX(), 1));
        return Result(success());
      })
      .Case([&](AddOp add) {
        ZRT_CALL(zrt_add, dtype(add.getY()), p(add.getA()), p(add.getB()),
                 p(add.getY()), numel(add.getY()));
        return Result(success());
      })
      .Case([&](ReluOp relu) {
        ZRT_CALL(zrt_relu, dtype(relu.getY()), p(relu.getX()), p(relu.getY()),
                 numel(relu.getY()));
        return Result(success());
      })
      .Case([&](GeluOp gelu) {
        ZRT_CALL(zrt_gelu, dtype(gelu.getY()), p(gelu.getX()), p(gelu.getY()),
                 numel(gelu.getY()));
        return Result(success());
      })
      .Case([&](ReluGradOp g) {
        ZRT_CALL(zrt_relu_grad, dtype(g.getDx()), p(g.getX()), p(g.getDy()),
                 p(g.getDx()), numel(g.getDx()));
        return Result(success());
      })
      .Case([&](GeluGradOp g) {
        ZRT_CALL(zrt_gelu_grad, dtype(g.getDx()), p(g.getX()), p(g.getDy()),
                 p(g.getDx()), numel(g.getDx()));
        return Result(success());
      })
      .Case([&](SwigluOp glu) {
        ZRT_CALL(zrt_swiglu, dtype(glu.getY()), p(glu.getGate()),
                 p(glu.getUp()), p(glu.getY()), numel(glu.getY()));
        return Result(success());
      })
      .Case([&](SwigluGradOp g) {
        ZRT_CALL(zrt_swiglu_grad, dtype(g.getGate()), p(g.getGate()),
                 p(g.getUp()), p(g.getDy()), p(g.getDgate()), p(g.getDup()),
                 numel(g.getGate()));
        return Result(success());
      })
      .Case([&](SoftmaxXentOp x) {
        ZRT_CALL(zrt_softmax_xent, dtype(x.getLogits()), p(x.getLogits()),
                 p(x.getLabels()), p(x.getLoss()), dim(x.getLogits(), 0),
                 dim(x.getLogits(), 1), f32(x.getDivisor()));
        return Result(success());
      })
      .Case([&](SoftmaxXentGradOp x) {
        ZRT_CALL(zrt_softmax_xent_grad, dtype(x.getDlogits()), p(x.getLogits()),
                 p(x.getLabels()), p(x.getDloss()), p(x.getDlogits()),
                 dim(x.getLogits(), 0), dim(x.getLogits(), 1),
                 f32(x.getDivisor()));
        return Result(success());
      })
      .Case([&](SoftmaxXentFusedOp x) {
        ZRT_CALL(zrt_softmax_xent_fused, dtype(x.getLogits()), p(x.getLogits()),
                 p(x.getLabels()), p(x.getDloss()), p(x.getLoss()),
                 p(x.getDlogits()), dim(x.getLogits(), 0),
                 dim(x.getLogits(), 1), f32(x.getDivisor()));
        return Result(success());
      })
      .Case([&](EmbeddingOp e) {
        ZRT_CALL(zrt_embedding, dtype(e.getOut()), p(e.getIds()),
                 p(e.getTable()), p(e.getOut()), numel(e.getIds()),
                 dim(e.getTable(), 0), dim(e.getTable(), 1));
        return Result(success());
      })
      .Case([&](EmbeddingGradOp e) {
        ZRT_CALL(zrt_embedding_grad, dtype(e.getDtable()), p(e.getIds()),
                 p(e.getDout()), p(e.getDtable()), numel(e.getIds()),
                 dim(e.getDtable(), 0), dim(e.getDtable(), 1));
        return Result(success());
      })
      .Case([&](LayerNormOp n) {
        ZRT_CALL(zrt_layer_norm, dtype(n.getY()), p(n.getX()), p(n.getGamma()),
                 p(n.getBeta()), p(n.getY()), dim(n.getX(), 0),
                 dim(n.getX(), 1), f32(n.getEpsilon()));
        return Result(success());
      })
      .Case([&](LayerNormGradOp n) {
        ZRT_CALL(zrt_layer_norm_grad, dtype(n.getX()), p(n.getX()),
                 p(n.getGamma()), p(n.getDy()), p(n.getDx()), p(n.getDgamma()),
                 p(n.getDbeta()), dim(n.getX(), 0), dim(n.getX(), 1),
                 f32(n.getEpsilon()));
        return Result(success());
      })
      .Case([&](RmsNormOp n) {
        ZRT_CALL(zrt_rms_norm, dtype(n.getY()), p(n.getX()), p(n.getGamma()),
                 p(n.getY()), dim(n.getX(), 0), dim(n.getX(), 1),
                 f32(n.getEpsilon()));
        return Result(success());
      })
      .Case([&](RmsNormGradOp n) {
        ZRT_CALL(zrt_rms_norm_grad, dtype(n.getX()), p(n.getX()),
                 p(n.getGamma()), p(n.getDy()), p(n.getDx()), p(n.getDgamma()),
                 dim(n.getX(), 0), dim(n.getX(), 1), f32(n.getEpsilon()));
        return Result(success());
      })
      .Case([&](RopeOp r) {
        int64_t seq = r.getSeqLen(), heads = r.getNumHeads();
        ZRT_CALL(zrt_rope, dtype(r.getY()), p(r.getX()), p(r.getY()),
                 I64{dim(r.getX(), 0).value / seq}, I64{seq}, I64{heads},
                 I64{dim(r.getX(), 1).value / heads},
                 Table{"rope_inv_freq", r.getInvFreq()}, flag(r.getInverse()));
        return Result(success());
      })
      .Case([&](AttentionOp a) {
        int64_t seq = a.getSeqLen();
        ZRT_CALL(zrt_attention, dtype(a.getOut()), p(a.getQ()), p(a.getK()),
                 p(a.getV()), p(a.getOut()), I64{dim(a.getQ(), 0).value / seq},
                 I64{seq}, I64{int64_t(a.getNumHeads())},
                 I64{int64_t(a.getNumKvHeads())}, I64{a.getHeadDim()});
        return Result(success());
      })
      .Case([&](AttentionGradOp a) {
        int64_t seq = a.getSeqLen();
        ZRT_CALL(zrt_attention_grad, dtype(a.getQ()), p(a.getQ()), p(a.getK()),
                 p(a.getV()), p(a.getDout()), p(a.getDq()), p(a.getDk()),
                 p(a.getDv()), I64{dim(a.getQ(), 0).value / seq}, I64{seq},
                 I64{int64_t(a.getNumHeads())}, I64{int64_t(a.getNumKvHeads())},
                 I64{a.getHeadDim()});
        return Result(success());
      })
      .Case([&](SliceColsOp s) {
        ZRT_CALL(zrt_slice_cols, dtype(s.getY()), p(s.getX()), p(s.getY()),
                 dim(s.getX(), 0), dim(s.getX(), 1),
                 I64{int64_t(s.getOffset())}, dim(s.getY(), 1));
        return Result(success());
      })
      .Case([&](SliceColsGradOp s) {
        ZRT_CALL(zrt_slice_cols_grad, dtype(s.getDx()), p(s.getDy()),
                 p(s.getDx()), dim(s.getDx(), 0), dim(s.getDx(), 1),
                 I64{int64_t(s.getOffset())}, dim(s.getDy(), 1));
        return Result(success());
      })
      .Case([&](SumSquaresOp s) {
        ZRT_CALL(zrt_sum_squares, dtype(s.getX()), p(s.getX()), p(s.getOut()),
                 numel(s.getX()));
        return Result(success());
      })
      .Case([&](AccumulateExactOp s) {
        ZRT_CALL(zrt_accumulate_exact, dtype(s.getX()), p(s.getX()),
                 p(s.getAcc()), numel(s.getX()));
        return Result(success());
      })
      .Case([&](SumSquaresExactOp s) {
        ZRT_CALL(zrt_sum_squares_exact, dtype(s.getX()), p(s.getX()),
                 p(s.getAcc()), numel(s.getX()));
        return Result(success());
      })
      .Case([&](FromExactOp s) {
        ZRT_CALL(zrt_from_exact, p(s.getExact()), p(s.getOut()),
                 numel(s.getExact()));
        return Result(success());
      })
      .Case([&](ClipCoefficientOp c) {
        ZRT_CALL(zrt_clip_coefficient, p(c.getTotalSq()), p(c.getMaxNorm()),
                 p(c.getCoefficient()));
        return Result(success());
      })
      .Case([&](AdamWOp u) {
        Value scale =
            u.getGradScale() ? p(u.getGradScale()) : emit.rt.nullPtr(loc);
        // The same arguments on the host (optimizer offload).
        if (u.getOnHost())
          ZRT_CALL(zrt_host_adamw, dtype(u.getGrad()), p(u.getParam()),
                   p(u.getGrad()), p(u.getExpAvg()), p(u.getExpAvgSq()),
                   p(u.getNewParam()), p(u.getNewExpAvg()),
                   p(u.getNewExpAvgSq()), numel(u.getParam()), p(u.getLr()),
                   p(u.getStep()), scale, p(u.getBeta1()), p(u.getBeta2()),
                   p(u.getEps()), p(u.getWeightDecay()));
        else
          ZRT_CALL(zrt_adamw, dtype(u.getGrad()), p(u.getParam()),
                   p(u.getGrad()), p(u.getExpAvg()), p(u.getExpAvgSq()),
                   p(u.getNewParam()), p(u.getNewExpAvg()),
                   p(u.getNewExpAvgSq()), numel(u.getParam()), p(u.getLr()),
                   p(u.getStep()), scale, p(u.getBeta1()), p(u.getBeta2()),
                   p(u.getEps()), p(u.getWeightDecay()));
        return Result(success());
      })
      .Case([&](LionOp u) {
        Value scale =
            u.getGradScale() ? p(u.getGradScale()) : emit.rt.nullPtr(loc);
        ZRT_CALL(zrt_lion, dtype(u.getGrad()), p(u.getParam()), p(u.getGrad()),
                 p(u.getExpAvg()), p(u.getNewParam()), p(u.getNewExpAvg()),
                 numel(u.getParam()), p(u.getLr()), scale, p(u.getBeta1()),
                 p(u.getBeta2()), p(u.getWeightDecay()));
        return Result(success());
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace zero::zrt_calls
