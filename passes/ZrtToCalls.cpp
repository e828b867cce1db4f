//===- ZrtToCalls.cpp - zrt ops to calls of the libzrt C ABI --------------===//
//
// The last step of the seam, and a mechanical one: every zrt op becomes the
// func.call of its zrt_* function (include/zero/zrt.h), every buffer an
// !llvm.ptr, and each zrt function the entry point a program exports:
// @zero_program_describe(%ctx), @zero_program_step(%ctx, %args, %loss),
// @zero_program_apply(%ctx, %args), the buffers of the arguments loaded
// from %args.
//
// Each call is checked against its C prototype when this file compiles:
// ZRT_CALL(zrt_matmul, ...) takes the argument list of zrt_matmul, and an
// argument missing, extra, or of another kind (a buffer for an int64_t, an
// int32_t for a float) is a static_assert. So zrt.h and the lowering cannot
// drift apart (test/runtime/zrt-calls-catalogue.test).
//
//===----------------------------------------------------------------------===//
#include "dialects/zrt/ZrtDialect.h"
#include "passes/PassUtils.h"
#include "passes/Passes.h"
#include "passes/RuntimeCalls.h"
#include "zero/zrt.h"

#include "llvm/ADT/TypeSwitch.h"

#include <type_traits>

namespace zero {
#define GEN_PASS_DEF_LOWERZRTTOCALLS
#include "passes/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::zrt;

namespace {

/// The kinds of C argument a call passes besides pointers (mlir::Value):
/// wrapped, so that none converts into another silently.
struct I64 {
  int64_t value;
};
struct I32 {
  int32_t value;
};
struct F32 {
  float value;
};
/// The int64_t handle of a started collective.
struct Handle {
  Value value;
};
/// A NUL-terminated string constant, for a `const char *`.
struct Str {
  StringRef value;
};
/// A constant table of floats, for a `const float *`.
struct Table {
  StringRef prefix;
  ArrayRef<float> values;
};
/// A buffer's pointer advanced by `bytes`.
struct Offset {
  Value base;
  int64_t bytes;
};
/// NULL, for an optional pointer.
struct Null {};

/// Whether an argument of kind `Arg` may be passed as C parameter `Param`.
template <typename Param, typename Arg>
constexpr bool kPassesAs = std::is_pointer_v<Param> && std::is_same_v<Arg, Value>;
template <>
constexpr bool kPassesAs<int64_t, I64> = true;
template <>
constexpr bool kPassesAs<int32_t, I32> = true;
template <>
constexpr bool kPassesAs<float, F32> = true;
template <>
constexpr bool kPassesAs<int64_t, Handle> = true;
template <>
constexpr bool kPassesAs<const char *, Str> = true;
template <>
constexpr bool kPassesAs<const float *, Table> = true;
template <typename Pointee>
constexpr bool kPassesAs<Pointee *, Offset> = true;
template <typename Pointee>
constexpr bool kPassesAs<Pointee *, Null> = true;

template <typename Fn>
struct Prototype;
/// A zrt_* function: the context, then its parameters.
template <typename R, typename... Params>
struct Prototype<R(zrt_context *, Params...)> {
  using Result = R;
  template <typename... Args>
  static constexpr bool accepts() {
    if constexpr (sizeof...(Params) != sizeof...(Args))
      return false;
    else
      return (kPassesAs<Params, Args> && ...);
  }
};

class CallEmitter {
public:
  CallEmitter(ModuleOp module, OpBuilder &b, Value ctx)
      : rt(module, b), b(b), ctx(ctx) {}

  /// Calls `name` of prototype `Fn` with `args` after the context.
  template <typename Fn, typename... Args>
  Value call(Location loc, StringRef name, Args... args) {
    using Proto = Prototype<Fn>;
    static_assert(Proto::template accepts<Args...>(),
                  "a zrt call disagrees with its prototype in zrt.h");
    SmallVector<Value> operands{ctx};
    (operands.push_back(materialize(loc, args)), ...);
    SmallVector<Type> results;
    if constexpr (std::is_same_v<typename Proto::Result, int64_t>)
      results.push_back(b.getI64Type());
    else if constexpr (std::is_pointer_v<typename Proto::Result>)
      results.push_back(rt.ptrType());
    func::CallOp call = rt.call(loc, name, operands, results);
    return results.empty() ? Value() : call.getResult(0);
  }

  RuntimeCalls rt;
  OpBuilder &b;
  Value ctx;
  /// The pointer (or handle) of each buffer (or started collective).
  DenseMap<Value, Value> lowered;

  Value ptr(Value buffer) { return lowered.lookup(buffer); }

private:
  Value materialize(Location, Value v) { return v; }
  Value materialize(Location loc, I64 v) { return rt.i64(loc, v.value); }
  Value materialize(Location loc, I32 v) { return rt.i32(loc, v.value); }
  Value materialize(Location loc, F32 v) { return rt.f32(loc, v.value); }
  Value materialize(Location, Handle v) { return v.value; }
  Value materialize(Location loc, Str v) { return rt.string(loc, v.value); }
  Value materialize(Location loc, Table v) {
    return rt.floatTable(loc, v.prefix, v.values);
  }
  Value materialize(Location loc, Offset v) {
    return rt.offsetPtr(loc, v.base, v.bytes);
  }
  Value materialize(Location loc, Null) { return rt.nullPtr(loc); }
};

#define ZRT_CALL(fn, ...)                                                      \
  emit.call<decltype(fn)>(op->getLoc(), #fn, __VA_ARGS__)

I64 numel(Value buffer) { return {getNumElements(buffer)}; }
I32 dtype(Value buffer) { return {getDType(buffer)}; }
I64 dim(Value buffer, unsigned d) {
  return {cast<MemRefType>(buffer.getType()).getShape()[d]};
}
F32 f32(APFloat value) { return {value.convertToFloat()}; }
I32 flag(bool value) { return {value}; }

/// The call of one zrt op; false when `op` is no zrt op.
LogicalResult lowerOp(CallEmitter &emit, Operation *op) {
  auto p = [&](Value buffer) { return emit.ptr(buffer); };
  Location loc = op->getLoc();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      // Program description.
      .Case([&](DeclareProgramOp d) {
        ZRT_CALL(zrt_declare_program, I64{ZRT_ABI_VERSION},
                 I64{int64_t(d.getWorldSize())}, I64{int64_t(d.getStage())},
                 I32{int32_t(d.getTask())}, I64{int64_t(d.getGlobalBatch())},
                 I64{int64_t(d.getSeqLen())}, I64{int64_t(d.getNumFeatures())},
                 I64{int64_t(d.getNumClasses())});
        return success();
      })
      .Case([&](DeclareMicroBatchesOp d) {
        ZRT_CALL(zrt_declare_micro_batches,
                 I64{int64_t(d.getMicroBatches())});
        return success();
      })
      .Case([&](DeclareArgOp d) {
        auto type = cast<RankedTensorType>(d.getType());
        I64 dims[4];
        for (int i = 0; i < 4; ++i)
          dims[i] = {i < type.getRank() ? type.getShape()[i] : 0};
        ZRT_CALL(zrt_declare_arg, I64{int64_t(d.getIndex())},
                 Str{d.getName()},
                 I32{int32_t(d.getRole())},
                 I32{type.getElementType().isBF16() ? ZRT_BF16 : ZRT_F32},
                 I32{int32_t(type.getRank())}, dims[0], dims[1], dims[2],
                 dims[3], flag(d.getSharded()), I32{int32_t(d.getInit())},
                 f32(d.getInitScale()));
        return success();
      })
      // Memory.
      .Case([&](AllocOp alloc) {
        Value buffer = ZRT_CALL(zrt_alloc, I64{alloc.getByteSize()},
                                I32{int32_t(alloc.getCategory())});
        // The planned offset stays visible next to its call.
        if (auto offset = alloc.getArenaOffsetAttr())
          buffer.getDefiningOp()->setAttr("zrt.arena_offset", offset);
        emit.lowered[alloc] = buffer;
        return success();
      })
      .Case([&](FreeOp free) {
        ZRT_CALL(zrt_free, p(free.getBuffer()));
        return success();
      })
      .Case([&](ViewOp view) {
        emit.lowered[view] = p(view.getSource());
        return success();
      })
      .Case([&](CopyOp copy) {
        ZRT_CALL(zrt_copy, Offset{p(copy.getSrc()), int64_t(copy.getSrcOffset())},
                 Offset{p(copy.getDst()), int64_t(copy.getDstOffset())},
                 I64{int64_t(copy.getBytes())});
        return success();
      })
      .Case([&](FillOp fill) {
        ZRT_CALL(zrt_fill, dtype(fill.getDst()), p(fill.getDst()),
                 numel(fill.getDst()), f32(fill.getValue()));
        return success();
      })
      .Case([&](CastOp c) {
        ZRT_CALL(zrt_cast, dtype(c.getSrc()), dtype(c.getDst()), p(c.getSrc()),
                 p(c.getDst()), numel(c.getDst()));
        return success();
      })
      .Case([&](ShardSliceOp s) {
        ZRT_CALL(zrt_shard_slice, dtype(s.getShard()), p(s.getFull()),
                 p(s.getShard()), numel(s.getFull()), numel(s.getShard()));
        return success();
      })
      // Kernels.
      .Case([&](MatmulOp mm) {
        Value a = mm.getA();
        ZRT_CALL(zrt_matmul, dtype(mm.getC()), p(a), p(mm.getB()),
                 p(mm.getC()), dim(mm.getC(), 0), dim(mm.getC(), 1),
                 dim(a, mm.getTransposeA() ? 0 : 1), flag(mm.getTransposeA()),
                 flag(mm.getTransposeB()));
        return success();
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
        return success();
      })
      .Case([&](BiasAddOp add) {
        ZRT_CALL(zrt_bias_add, dtype(add.getY()), p(add.getX()),
                 p(add.getBias()), p(add.getY()), dim(add.getX(), 0),
                 dim(add.getX(), 1));
        return success();
      })
      .Case([&](SumRowsOp sum) {
        ZRT_CALL(zrt_sum_rows, dtype(sum.getY()), p(sum.getX()), p(sum.getY()),
                 dim(sum.getX(), 0), dim(sum.getX(), 1));
        return success();
      })
      .Case([&](AddOp add) {
        ZRT_CALL(zrt_add, dtype(add.getY()), p(add.getA()), p(add.getB()),
                 p(add.getY()), numel(add.getY()));
        return success();
      })
      .Case([&](ReluOp relu) {
        ZRT_CALL(zrt_relu, dtype(relu.getY()), p(relu.getX()), p(relu.getY()),
                 numel(relu.getY()));
        return success();
      })
      .Case([&](GeluOp gelu) {
        ZRT_CALL(zrt_gelu, dtype(gelu.getY()), p(gelu.getX()), p(gelu.getY()),
                 numel(gelu.getY()));
        return success();
      })
      .Case([&](ReluGradOp g) {
        ZRT_CALL(zrt_relu_grad, dtype(g.getDx()), p(g.getX()), p(g.getDy()),
                 p(g.getDx()), numel(g.getDx()));
        return success();
      })
      .Case([&](GeluGradOp g) {
        ZRT_CALL(zrt_gelu_grad, dtype(g.getDx()), p(g.getX()), p(g.getDy()),
                 p(g.getDx()), numel(g.getDx()));
        return success();
      })
      .Case([&](SwigluOp glu) {
        ZRT_CALL(zrt_swiglu, dtype(glu.getY()), p(glu.getGate()),
                 p(glu.getUp()), p(glu.getY()), numel(glu.getY()));
        return success();
      })
      .Case([&](SwigluGradOp g) {
        ZRT_CALL(zrt_swiglu_grad, dtype(g.getGate()), p(g.getGate()),
                 p(g.getUp()), p(g.getDy()), p(g.getDgate()), p(g.getDup()),
                 numel(g.getGate()));
        return success();
      })
      .Case([&](SoftmaxXentOp x) {
        ZRT_CALL(zrt_softmax_xent, dtype(x.getLogits()), p(x.getLogits()),
                 p(x.getLabels()), p(x.getLoss()), dim(x.getLogits(), 0),
                 dim(x.getLogits(), 1), f32(x.getDivisor()));
        return success();
      })
      .Case([&](SoftmaxXentGradOp x) {
        ZRT_CALL(zrt_softmax_xent_grad, dtype(x.getDlogits()),
                 p(x.getLogits()), p(x.getLabels()), p(x.getDloss()),
                 p(x.getDlogits()), dim(x.getLogits(), 0),
                 dim(x.getLogits(), 1), f32(x.getDivisor()));
        return success();
      })
      .Case([&](EmbeddingOp e) {
        ZRT_CALL(zrt_embedding, dtype(e.getOut()), p(e.getIds()),
                 p(e.getTable()), p(e.getOut()), numel(e.getIds()),
                 dim(e.getTable(), 0), dim(e.getTable(), 1));
        return success();
      })
      .Case([&](EmbeddingGradOp e) {
        ZRT_CALL(zrt_embedding_grad, dtype(e.getDtable()), p(e.getIds()),
                 p(e.getDout()), p(e.getDtable()), numel(e.getIds()),
                 dim(e.getDtable(), 0), dim(e.getDtable(), 1));
        return success();
      })
      .Case([&](LayerNormOp n) {
        ZRT_CALL(zrt_layer_norm, dtype(n.getY()), p(n.getX()), p(n.getGamma()),
                 p(n.getBeta()), p(n.getY()), dim(n.getX(), 0),
                 dim(n.getX(), 1), f32(n.getEpsilon()));
        return success();
      })
      .Case([&](LayerNormGradOp n) {
        ZRT_CALL(zrt_layer_norm_grad, dtype(n.getX()), p(n.getX()),
                 p(n.getGamma()), p(n.getDy()), p(n.getDx()), p(n.getDgamma()),
                 p(n.getDbeta()), dim(n.getX(), 0), dim(n.getX(), 1),
                 f32(n.getEpsilon()));
        return success();
      })
      .Case([&](RmsNormOp n) {
        ZRT_CALL(zrt_rms_norm, dtype(n.getY()), p(n.getX()), p(n.getGamma()),
                 p(n.getY()), dim(n.getX(), 0), dim(n.getX(), 1),
                 f32(n.getEpsilon()));
        return success();
      })
      .Case([&](RmsNormGradOp n) {
        ZRT_CALL(zrt_rms_norm_grad, dtype(n.getX()), p(n.getX()),
                 p(n.getGamma()), p(n.getDy()), p(n.getDx()), p(n.getDgamma()),
                 dim(n.getX(), 0), dim(n.getX(), 1), f32(n.getEpsilon()));
        return success();
      })
      .Case([&](RopeOp r) {
        int64_t seq = r.getSeqLen(), heads = r.getNumHeads();
        ZRT_CALL(zrt_rope, dtype(r.getY()), p(r.getX()), p(r.getY()),
                 I64{dim(r.getX(), 0).value / seq}, I64{seq}, I64{heads},
                 I64{dim(r.getX(), 1).value / heads},
                 Table{"rope_inv_freq", r.getInvFreq()},
                 flag(r.getInverse()));
        return success();
      })
      .Case([&](AttentionOp a) {
        int64_t seq = a.getSeqLen();
        ZRT_CALL(zrt_attention, dtype(a.getOut()), p(a.getQ()), p(a.getK()),
                 p(a.getV()), p(a.getOut()), I64{dim(a.getQ(), 0).value / seq},
                 I64{seq}, I64{int64_t(a.getNumHeads())},
                 I64{int64_t(a.getNumKvHeads())}, I64{a.getHeadDim()});
        return success();
      })
      .Case([&](AttentionGradOp a) {
        int64_t seq = a.getSeqLen();
        ZRT_CALL(zrt_attention_grad, dtype(a.getQ()), p(a.getQ()), p(a.getK()),
                 p(a.getV()), p(a.getDout()), p(a.getDq()), p(a.getDk()),
                 p(a.getDv()), I64{dim(a.getQ(), 0).value / seq}, I64{seq},
                 I64{int64_t(a.getNumHeads())},
                 I64{int64_t(a.getNumKvHeads())}, I64{a.getHeadDim()});
        return success();
      })
      .Case([&](SliceColsOp s) {
        ZRT_CALL(zrt_slice_cols, dtype(s.getY()), p(s.getX()), p(s.getY()),
                 dim(s.getX(), 0), dim(s.getX(), 1),
                 I64{int64_t(s.getOffset())}, dim(s.getY(), 1));
        return success();
      })
      .Case([&](SliceColsGradOp s) {
        ZRT_CALL(zrt_slice_cols_grad, dtype(s.getDx()), p(s.getDy()),
                 p(s.getDx()), dim(s.getDx(), 0), dim(s.getDx(), 1),
                 I64{int64_t(s.getOffset())}, dim(s.getDy(), 1));
        return success();
      })
      .Case([&](SumSquaresOp s) {
        ZRT_CALL(zrt_sum_squares, dtype(s.getX()), p(s.getX()), p(s.getOut()),
                 numel(s.getX()));
        return success();
      })
      .Case([&](ClipCoefficientOp c) {
        ZRT_CALL(zrt_clip_coefficient, p(c.getTotalSq()), p(c.getMaxNorm()),
                 p(c.getCoefficient()));
        return success();
      })
      .Case([&](AdamWOp u) {
        Value scale =
            u.getGradScale() ? p(u.getGradScale()) : emit.rt.nullPtr(loc);
        ZRT_CALL(zrt_adamw, dtype(u.getGrad()), p(u.getParam()),
                 p(u.getGrad()), p(u.getExpAvg()), p(u.getExpAvgSq()),
                 p(u.getNewParam()), p(u.getNewExpAvg()),
                 p(u.getNewExpAvgSq()), numel(u.getParam()), p(u.getLr()),
                 p(u.getStep()), scale, f32(u.getBeta1()), f32(u.getBeta2()),
                 f32(u.getEps()), f32(u.getWeightDecay()));
        return success();
      })
      // Collectives: (dtype, input, output, N, S), or (dtype, x, y, n).
      .Case([&](AllGatherOp c) {
        ZRT_CALL(zrt_all_gather, dtype(c.getInput()), p(c.getInput()),
                 p(c.getOutput()), I64{c.getWholeElements()},
                 I64{c.getShardElements()});
        return success();
      })
      .Case([&](ReduceScatterOp c) {
        ZRT_CALL(zrt_reduce_scatter, dtype(c.getInput()), p(c.getInput()),
                 p(c.getOutput()), I64{c.getWholeElements()},
                 I64{c.getShardElements()});
        return success();
      })
      .Case([&](AllReduceOp c) {
        ZRT_CALL(zrt_all_reduce, dtype(c.getInput()), p(c.getInput()),
                 p(c.getOutput()), I64{c.getWholeElements()});
        return success();
      })
      .Case([&](AllGatherStartOp c) {
        emit.lowered[c.getHandle()] = ZRT_CALL(
            zrt_all_gather_start, dtype(c.getInput()), p(c.getInput()),
            p(c.getOutput()), I64{c.getWholeElements()},
            I64{c.getShardElements()});
        return success();
      })
      .Case([&](ReduceScatterStartOp c) {
        emit.lowered[c.getHandle()] = ZRT_CALL(
            zrt_reduce_scatter_start, dtype(c.getInput()), p(c.getInput()),
            p(c.getOutput()), I64{c.getWholeElements()},
            I64{c.getShardElements()});
        return success();
      })
      .Case([&](AllReduceStartOp c) {
        emit.lowered[c.getHandle()] =
            ZRT_CALL(zrt_all_reduce_start, dtype(c.getInput()),
                     p(c.getInput()), p(c.getOutput()),
                     I64{c.getWholeElements()});
        return success();
      })
      .Case([&](WaitOp w) {
        ZRT_CALL(zrt_wait, Handle{emit.lowered.lookup(w.getHandle())});
        return success();
      })
      .Default([&](Operation *) {
        return op->emitOpError("is no zrt op: zero-lower-zrt-to-calls "
                               "expects functions of zrt ops only");
      });
}
#undef ZRT_CALL

struct LowerZrtToCallsPass
    : zero::impl::LowerZrtToCallsBase<LowerZrtToCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (StringRef name :
         {"zero_program_describe", "zero_program_step", "zero_program_apply"})
      if (auto func = module.lookupSymbol<func::FuncOp>(name))
        if (failed(lowerFunction(func)))
          return signalPassFailure();
  }

  /// Replaces `func` (of buffer arguments, the last the loss when marked
  /// zrt.loss) by the exported function of pointers.
  LogicalResult lowerFunction(func::FuncOp func) {
    ModuleOp module = getOperation();
    OpBuilder b(func);
    Type ptr = LLVM::LLVMPointerType::get(&getContext());
    bool isDescribe = func.getName() == "zero_program_describe";
    unsigned numArgs = func.getNumArguments();
    bool withLoss =
        numArgs && func.getArgAttr(numArgs - 1, kLossAttrName) != nullptr;
    SmallVector<Type> types{ptr};
    if (!isDescribe)
      types.push_back(ptr);
    if (withLoss)
      types.push_back(ptr);
    auto entry = func::FuncOp::create(b, func.getLoc(),
                                      (func.getName() + ".lowered").str(),
                                      b.getFunctionType(types, {}));
    Block *block = entry.addEntryBlock();
    b.setInsertionPointToStart(block);
    CallEmitter emit(module, b, block->getArgument(0));
    for (BlockArgument arg : func.getArguments()) {
      if (withLoss && arg.getArgNumber() == numArgs - 1) {
        emit.lowered[arg] = block->getArgument(2);
        continue;
      }
      if (isDescribe)
        return func.emitOpError("the describe function takes no arguments");
      Value slot = LLVM::GEPOp::create(
          b, arg.getLoc(), ptr, ptr, block->getArgument(1),
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(arg.getArgNumber())});
      emit.lowered[arg] = LLVM::LoadOp::create(b, arg.getLoc(), ptr, slot);
    }
    for (Operation &op : func.getBody().front()) {
      if (isa<func::ReturnOp>(op))
        continue;
      if (failed(lowerOp(emit, &op)))
        return failure();
    }
    func::ReturnOp::create(b, func.getLoc());
    if (Attribute arenas = func->getAttr(kArenaBytesAttrName))
      entry->setAttr(kArenaBytesAttrName, arenas);
    std::string name = func.getName().str();
    func.erase();
    entry.setName(name);
    return success();
  }
};
} // namespace
