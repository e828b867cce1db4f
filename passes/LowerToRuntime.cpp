//===- LowerToRuntime.cpp - @train_step to calls of libzrt ----------------===//
//
// Turns the tensor program into the two functions a zero-opt executable
// exports (see include/zero/zrt.h): one that describes the program's
// arguments to the runtime, one that runs a training step on their buffers.
// Buffers are allocated before their producer and freed right after their
// last use, so the runtime's ledger sees the program's real liveness.
//
//===----------------------------------------------------------------------===//
#include "passes/PassUtils.h"
#include "passes/Passes.h"
#include "passes/ProgramDescription.h"
#include "passes/RuntimeCalls.h"
#include "zero/zrt.h"

#include "llvm/ADT/TypeSwitch.h"

namespace zero {
#define GEN_PASS_DEF_LOWERTORUNTIME
#include "passes/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {

/// Lowers the body of @train_step into @zero_program_step.
class StepLowering {
public:
  StepLowering(func::FuncOp trainStep, RuntimeCalls &rt, OpBuilder &b,
               Value ctx)
      : trainStep(trainStep), rt(rt), b(b), ctx(ctx) {}

  LogicalResult lower(Value argsArray, Value lossOut);

private:
  func::FuncOp trainStep;
  RuntimeCalls &rt;
  OpBuilder &b;
  Value ctx;
  int64_t worldSize = 1;
  /// The buffer (!llvm.ptr) holding each tensor.
  DenseMap<Value, Value> buffers;
  /// Tensors whose buffer this step allocated and must free.
  llvm::SetVector<Value> owned;
  /// Position in the block of each tensor's last user.
  DenseMap<Value, unsigned> lastUse;
  /// Results that update an argument, and that argument.
  DenseMap<Value, Value> destinations;
  /// Whole parameter gradients: what the collectives reduce and AdamW reads.
  /// Their buffers count as gradient memory, the rest of the backward's as
  /// activations.
  DenseSet<Value> gradients;
  /// The ledger category each owned buffer was allocated under.
  DenseMap<Value, zrt_mem_category> categories;
  unsigned position = 0;

  void analyse();
  LogicalResult lowerOp(Operation *op);
  void lowerReturn(func::ReturnOp ret, Value lossOut);
  void freeDeadValues(Operation *op);
  Value bufferFor(Value result, zrt_mem_category category,
                  Value inPlaceOperand = nullptr,
                  std::optional<unsigned> operandDiesAt = std::nullopt);
  /// The handle each asynchronous collective's future carries.
  DenseMap<Value, Value> handles;
  /// Block position of each op.
  DenseMap<Operation *, unsigned> positions;
  /// The values whose last use is at each position.
  DenseMap<unsigned, SmallVector<Value>> deaths;
  /// Lowers a zero.*_start: the buffer of its wait's result, the call.
  template <typename StartOp>
  void lowerStart(StartOp start, StringRef callee, zrt_mem_category category,
                  ArrayRef<Value> args, Value inPlace = nullptr);
  void lowerPacking(Value flat, ValueRange members, int64_t chunks,
                    bool intoFlat);
  Value buf(Value tensor) { return buffers.lookup(tensor); }
  void call(Location loc, StringRef name, ArrayRef<Value> args) {
    SmallVector<Value> operands{ctx};
    operands.append(args.begin(), args.end());
    rt.call(loc, name, operands);
  }
};

void StepLowering::analyse() {
  Block &entry = trainStep.getBody().front();
  for (auto [index, op] : llvm::enumerate(entry)) {
    positions[&op] = index;
    for (Value operand : op.getOperands())
      lastUse[operand] = index;
  }
  // An asynchronous collective reads its input until its wait.
  for (Operation &op : entry)
    if (isa<AllGatherStartOp, ReduceScatterStartOp, AllReduceStartOp>(op)) {
      unsigned waitAt = positions[*op.getResult(0).getUsers().begin()];
      for (Value operand : op.getOperands())
        lastUse[operand] = std::max(lastUse[operand], waitAt);
    }
  // In program order, not the map's (which follows pointer values): values
  // that die together are then freed in the same order on every run, and
  // the compiled program is the same every time.
  DenseSet<Value> listed;
  for (Operation &op : entry)
    for (Value operand : op.getOperands())
      if (listed.insert(operand).second)
        deaths[lastUse[operand]].push_back(operand);
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i)
    if (auto updates =
            trainStep.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttrName))
      destinations[ret.getOperand(i)] = trainStep.getArgument(updates.getInt());
  if (auto attr = trainStep->getAttrOfType<IntegerAttr>(kWorldSizeAttrName))
    worldSize = attr.getInt();
  trainStep.walk([&](Operation *op) {
    if (auto update = dyn_cast<nn::AdamWOp>(op))
      gradients.insert(update.getGrad());
    else if (isa<ReduceScatterOp, ReduceScatterStartOp>(op))
      gradients.insert(op->getOperand(0));
  });
  // Back from what AdamW reads: an all-reduced gradient (stage 0) is a
  // gradient before its reduction, and a bucket's members are gradients
  // (the packed bucket itself is communication staging).
  auto isGradient = [&](Value v) { return gradients.contains(v); };
  for (Operation &op : llvm::reverse(entry)) {
    if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      if (isGradient(reduce.getResult()))
        gradients.insert(reduce.getInput());
    } else if (auto start = dyn_cast<AllReduceStartOp>(op)) {
      if (isGradient(start.getWait().getResult()))
        gradients.insert(start.getInput());
    } else if (auto unpack = dyn_cast<UnpackOp>(op)) {
      if (llvm::any_of(unpack.getResults(), isGradient))
        gradients.insert(unpack.getInput());
    } else if (auto pack = dyn_cast<PackOp>(op)) {
      if (isGradient(pack.getResult()))
        gradients.insert(pack.getInputs().begin(), pack.getInputs().end());
    }
  }
}

template <typename StartOp>
void StepLowering::lowerStart(StartOp start, StringRef callee,
                              zrt_mem_category category, ArrayRef<Value> args,
                              Value inPlace) {
  Location loc = start.getLoc();
  Value result = start.getWait().getResult();
  Value out = bufferFor(result, category, inPlace,
                        positions.lookup(start.getWait()));
  SmallVector<Value> operands{ctx,
                              rt.i32(loc, runtimeDType(start.getValueType()))};
  operands.push_back(buf(start.getInput()));
  operands.push_back(out);
  operands.append(args.begin(), args.end());
  handles[start.getFuture()] =
      rt.call(loc, callee, operands, rt.i64Type()).getResult(0);
}

/// Chooses the buffer of `result`: straight into the argument it updates
/// when nothing reads that argument afterwards; over `inPlaceOperand` when
/// the op may write in place and the operand dies here; else a new one.
Value StepLowering::bufferFor(Value result, zrt_mem_category category,
                              Value inPlaceOperand,
                              std::optional<unsigned> operandDiesAt) {
  unsigned dies = operandDiesAt.value_or(position);
  if (Value dest = destinations.lookup(result)) {
    auto it = lastUse.find(dest);
    bool deadBefore = it == lastUse.end() || it->second < position;
    bool dyingHere = it != lastUse.end() && it->second == dies &&
                     inPlaceOperand == dest;
    if (deadBefore || dyingHere)
      return buffers[result] = buf(dest);
  }
  // Reuse keeps the allocation's ledger category, so only a buffer of the
  // same category is reused: the runtime's ledger stays exact.
  if (inPlaceOperand && owned.contains(inPlaceOperand) &&
      lastUse.lookup(inPlaceOperand) == dies &&
      getByteSize(inPlaceOperand.getType()) == getByteSize(result.getType()) &&
      categories.lookup(inPlaceOperand) == category) {
    owned.remove(inPlaceOperand);
    owned.insert(result);
    categories[result] = category;
    return buffers[result] = buf(inPlaceOperand);
  }
  Location loc = result.getLoc();
  Value ptr = rt.call(loc, "zrt_alloc",
                      {ctx, rt.i64(loc, getByteSize(result.getType())),
                       rt.i32(loc, category)},
                      rt.ptrType())
                  .getResult(0);
  owned.insert(result);
  categories[result] = category;
  return buffers[result] = ptr;
}

LogicalResult StepLowering::lowerOp(Operation *op) {
  Location loc = op->getLoc();
  auto n = [&](Value v) { return rt.i64(loc, getNumElements(v.getType())); };
  auto i64 = [&](int64_t v) { return rt.i64(loc, v); };
  auto dt = [&](Value v) { return rt.i32(loc, runtimeDType(v.getType())); };
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  auto act = [&](Value result, Value inPlace = nullptr) {
    return bufferFor(result,
                     gradients.contains(result) ? ZRT_MEM_GRAD
                                                : ZRT_MEM_ACTIVATION,
                     inPlace);
  };
  // The trailing arguments zrt_matmul and zrt_matmul_bias share: m, n, k and
  // the transpose flags of `gemm` (nn.matmul or a fused linear op).
  auto gemmShape = [&](auto gemm) -> SmallVector<Value> {
    auto lhs = shape(gemm.getLhs());
    auto out = shape(gemm.getResult());
    int64_t k = gemm.getTransposeLhs() ? lhs[0] : lhs[1];
    return {i64(out[0]), i64(out[1]), i64(k),
            rt.i32(loc, gemm.getTransposeLhs()),
            rt.i32(loc, gemm.getTransposeRhs())};
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp constant) -> LogicalResult {
        auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
        if (!splat || !isa<FloatType>(splat.getElementType()))
          return op->emitOpError("cannot be lowered to the runtime: only "
                                 "float splat tensor constants are supported");
        Value out = act(constant);
        call(loc, "zrt_fill",
             {dt(constant), out, n(constant),
              rt.f32(loc, splat.getSplatValue<APFloat>().convertToDouble())});
        return success();
      })
      .Case([&](nn::MatmulOp mm) {
        Value c = act(mm);
        SmallVector<Value> args = {dt(mm), buf(mm.getLhs()), buf(mm.getRhs()),
                                   c};
        llvm::append_range(args, gemmShape(mm));
        call(loc, "zrt_matmul", args);
        return success();
      })
      .Case<nn::MatmulBiasOp, nn::MatmulBiasGeluOp>([&](auto linear) {
        bool gelu = isa<nn::MatmulBiasGeluOp>(op);
        Value pre = gelu ? act(op->getResult(0)) : rt.nullPtr(loc);
        Value c = act(linear.getResult());
        SmallVector<Value> args = {dt(linear.getResult()),
                                   buf(linear.getLhs()),
                                   buf(linear.getRhs()),
                                   buf(linear.getBias()),
                                   c,
                                   pre};
        llvm::append_range(args, gemmShape(linear));
        args.push_back(
            rt.i32(loc, gelu ? ZRT_EPILOGUE_BIAS_GELU : ZRT_EPILOGUE_BIAS));
        call(loc, "zrt_matmul_bias", args);
        return success();
      })
      .Case([&](nn::BiasAddOp add) {
        auto s = shape(add.getInput());
        Value y = act(add, add.getInput());
        call(loc, "zrt_bias_add",
             {dt(add), buf(add.getInput()), buf(add.getBias()), y, i64(s[0]),
              i64(s[1])});
        return success();
      })
      .Case([&](nn::SumRowsOp sum) {
        auto s = shape(sum.getInput());
        call(loc, "zrt_sum_rows",
             {dt(sum), buf(sum.getInput()), act(sum), i64(s[0]), i64(s[1])});
        return success();
      })
      .Case([&](nn::AddOp add) {
        Value y = act(add, add.getLhs());
        call(loc, "zrt_add",
             {dt(add), buf(add.getLhs()), buf(add.getRhs()), y, n(add)});
        return success();
      })
      .Case<nn::ReluOp, nn::GeluOp>([&](auto unary) {
        StringRef name = isa<nn::ReluOp>(op) ? "zrt_relu" : "zrt_gelu";
        call(loc, name,
             {dt(unary), buf(unary.getInput()), act(unary), n(unary)});
        return success();
      })
      .Case<nn::ReluGradOp, nn::GeluGradOp>([&](auto grad) {
        StringRef name =
            isa<nn::ReluGradOp>(op) ? "zrt_relu_grad" : "zrt_gelu_grad";
        Value dx = act(grad, grad.getResultGrad());
        call(loc, name,
             {dt(grad), buf(grad.getInput()), buf(grad.getResultGrad()), dx,
              n(grad)});
        return success();
      })
      .Case([&](nn::SwigluOp glu) {
        call(loc, "zrt_swiglu",
             {dt(glu), buf(glu.getGate()), buf(glu.getUp()), act(glu),
              n(glu)});
        return success();
      })
      .Case([&](nn::SwigluGradOp grad) {
        Value dGate = act(grad.getGateGrad());
        Value dUp = act(grad.getUpGrad());
        call(loc, "zrt_swiglu_grad",
             {dt(grad.getGate()), buf(grad.getGate()), buf(grad.getUp()),
              buf(grad.getResultGrad()), dGate, dUp, n(grad.getGate())});
        return success();
      })
      .Case([&](nn::SoftmaxCrossEntropyOp loss) {
        auto s = shape(loss.getLogits());
        call(loc, "zrt_softmax_xent",
             {dt(loss.getLogits()), buf(loss.getLogits()),
              buf(loss.getLabels()), act(loss), i64(s[0]), i64(s[1]),
              rt.f32(loc, loss.getEffectiveDivisor())});
        return success();
      })
      .Case([&](nn::SoftmaxCrossEntropyGradOp grad) {
        auto s = shape(grad.getLogits());
        call(loc, "zrt_softmax_xent_grad",
             {dt(grad), buf(grad.getLogits()), buf(grad.getLabels()),
              buf(grad.getLossGrad()), act(grad), i64(s[0]), i64(s[1]),
              rt.f32(loc, grad.getDivisor())});
        return success();
      })
      .Case([&](nn::EmbeddingOp lookup) {
        auto table = shape(lookup.getTable());
        call(loc, "zrt_embedding",
             {dt(lookup), buf(lookup.getIds()), buf(lookup.getTable()),
              act(lookup), n(lookup.getIds()), i64(table[0]), i64(table[1])});
        return success();
      })
      .Case([&](nn::EmbeddingGradOp grad) {
        auto table = shape(grad.getResult());
        call(loc, "zrt_embedding_grad",
             {dt(grad), buf(grad.getIds()), buf(grad.getResultGrad()),
              act(grad), n(grad.getIds()), i64(table[0]), i64(table[1])});
        return success();
      })
      .Case([&](nn::LayerNormOp norm) {
        auto s = shape(norm.getInput());
        call(loc, "zrt_layer_norm",
             {dt(norm), buf(norm.getInput()), buf(norm.getGamma()),
              buf(norm.getBeta()), act(norm), i64(s[0]), i64(s[1]),
              rt.f32(loc, norm.getEpsilon().convertToFloat())});
        return success();
      })
      .Case([&](nn::LayerNormGradOp grad) {
        auto s = shape(grad.getInput());
        Value dx = act(grad.getInputGrad());
        Value dGamma = act(grad.getGammaGrad());
        Value dBeta = act(grad.getBetaGrad());
        call(loc, "zrt_layer_norm_grad",
             {dt(grad.getInput()), buf(grad.getInput()), buf(grad.getGamma()),
              buf(grad.getResultGrad()), dx, dGamma, dBeta, i64(s[0]),
              i64(s[1]), rt.f32(loc, grad.getEpsilon().convertToFloat())});
        return success();
      })
      .Case([&](nn::RmsNormOp norm) {
        auto s = shape(norm.getInput());
        call(loc, "zrt_rms_norm",
             {dt(norm), buf(norm.getInput()), buf(norm.getGamma()), act(norm),
              i64(s[0]), i64(s[1]),
              rt.f32(loc, norm.getEpsilon().convertToFloat())});
        return success();
      })
      .Case([&](nn::RmsNormGradOp grad) {
        auto s = shape(grad.getInput());
        Value dx = act(grad.getInputGrad());
        Value dGamma = act(grad.getGammaGrad());
        call(loc, "zrt_rms_norm_grad",
             {dt(grad.getInput()), buf(grad.getInput()), buf(grad.getGamma()),
              buf(grad.getResultGrad()), dx, dGamma, i64(s[0]), i64(s[1]),
              rt.f32(loc, grad.getEpsilon().convertToFloat())});
        return success();
      })
      .Case([&](nn::RopeOp rope) {
        auto s = shape(rope.getInput());
        int64_t seq = rope.getSeqLen(), heads = rope.getNumHeads();
        call(loc, "zrt_rope",
             {dt(rope), buf(rope.getInput()), act(rope, rope.getInput()),
              i64(s[0] / seq), i64(seq), i64(heads), i64(s[1] / heads),
              rt.floatTable(loc, "rope_inv_freq",
                            rope.getInverseFrequencies()),
              rt.i32(loc, rope.getInverse())});
        return success();
      })
      .Case([&](nn::AttentionOp attn) {
        auto s = shape(attn.getQuery());
        int64_t seq = attn.getSeqLen();
        call(loc, "zrt_attention",
             {dt(attn), buf(attn.getQuery()), buf(attn.getKey()),
              buf(attn.getValue()), act(attn), i64(s[0] / seq), i64(seq),
              i64(attn.getNumHeads()), i64(attn.getNumKvHeads()),
              i64(attn.getHeadDim())});
        return success();
      })
      .Case([&](nn::AttentionGradOp grad) {
        auto s = shape(grad.getQuery());
        int64_t seq = grad.getSeqLen(), heads = grad.getNumHeads();
        Value dq = act(grad.getQueryGrad());
        Value dk = act(grad.getKeyGrad());
        Value dv = act(grad.getValueGrad());
        call(loc, "zrt_attention_grad",
             {dt(grad.getQuery()), buf(grad.getQuery()), buf(grad.getKey()),
              buf(grad.getValue()), buf(grad.getResultGrad()), dq, dk, dv,
              i64(s[0] / seq), i64(seq), i64(heads),
              i64(grad.getNumKvHeads()), i64(s[1] / heads)});
        return success();
      })
      .Case([&](nn::SliceColsOp slice) {
        auto in = shape(slice.getInput());
        call(loc, "zrt_slice_cols",
             {dt(slice), buf(slice.getInput()), act(slice), i64(in[0]),
              i64(in[1]), i64(slice.getOffset()),
              i64(shape(slice.getResult())[1])});
        return success();
      })
      .Case([&](nn::SliceColsGradOp grad) {
        auto out = shape(grad.getResult());
        call(loc, "zrt_slice_cols_grad",
             {dt(grad), buf(grad.getResultGrad()), act(grad), i64(out[0]),
              i64(out[1]), i64(grad.getOffset()),
              i64(shape(grad.getResultGrad())[1])});
        return success();
      })
      .Case([&](nn::CastOp castOp) {
        // The optimizer casts the new master to the parameter: in place of
        // the parameter when it is whole or a shard of its own (stages 0,
        // 3), else into a staging shard that is gathered (stages 1, 2).
        zrt_mem_category category = ZRT_MEM_ACTIVATION;
        if (castOp.getInput().getDefiningOp<nn::AdamWOp>())
          category = llvm::all_of(castOp->getUsers(),
                                  [](Operation *user) {
                                    return isa<AllGatherOp, AllGatherStartOp>(
                                        user);
                                  })
                         ? ZRT_MEM_COMM
                         : ZRT_MEM_PARAM;
        Value out = bufferFor(castOp, category);
        call(loc, "zrt_cast",
             {dt(castOp.getInput()), dt(castOp), buf(castOp.getInput()), out,
              n(castOp)});
        return success();
      })
      .Case([&](nn::SumSquaresOp sum) {
        call(loc, "zrt_sum_squares",
             {dt(sum.getInput()), buf(sum.getInput()), act(sum),
              n(sum.getInput())});
        return success();
      })
      .Case([&](nn::ClipCoefficientOp clip) {
        call(loc, "zrt_clip_coefficient",
             {buf(clip.getTotalSq()), buf(clip.getMaxNorm()), act(clip)});
        return success();
      })
      .Case([&](nn::AdamWOp update) {
        Value p = bufferFor(update.getNewParam(), ZRT_MEM_OPTIMIZER,
                            update.getParam());
        Value m = bufferFor(update.getNewExpAvg(), ZRT_MEM_OPTIMIZER,
                            update.getExpAvg());
        Value v = bufferFor(update.getNewExpAvgSq(), ZRT_MEM_OPTIMIZER,
                            update.getExpAvgSq());
        Value scale = update.getGradScale()
                          ? buf(update.getGradScale())
                          : LLVM::ZeroOp::create(b, loc, rt.ptrType());
        call(loc, "zrt_adamw",
             {dt(update.getGrad()), buf(update.getParam()),
              buf(update.getGrad()), buf(update.getExpAvg()),
              buf(update.getExpAvgSq()), p, m, v, n(update.getParam()),
              buf(update.getLr()), buf(update.getStep()), scale,
              rt.f32(loc, update.getBeta1().convertToFloat()),
              rt.f32(loc, update.getBeta2().convertToFloat()),
              rt.f32(loc, update.getEps().convertToFloat()),
              rt.f32(loc, update.getWeightDecay().convertToFloat())});
        return success();
      })
      .Case([&](AllGatherOp gather) {
        Value full = bufferFor(gather, ZRT_MEM_COMM);
        call(loc, "zrt_all_gather",
             {dt(gather), buf(gather.getInput()), full, n(gather),
              n(gather.getInput())});
        return success();
      })
      .Case([&](ReduceScatterOp scatter) {
        Value shard = bufferFor(scatter, ZRT_MEM_GRAD);
        call(loc, "zrt_reduce_scatter",
             {dt(scatter), buf(scatter.getInput()), shard,
              n(scatter.getInput()), n(scatter)});
        return success();
      })
      .Case([&](AllReduceOp reduce) {
        Value y = act(reduce, reduce.getInput());
        call(loc, "zrt_all_reduce",
             {dt(reduce), buf(reduce.getInput()), y, n(reduce)});
        return success();
      })
      .Case([&](LocalShardOp slice) {
        Value shard = bufferFor(slice, ZRT_MEM_OPTIMIZER);
        call(loc, "zrt_shard_slice",
             {dt(slice), buf(slice.getInput()), shard, n(slice.getInput()),
              n(slice)});
        return success();
      })
      .Case([&](AllGatherStartOp start) {
        lowerStart(start, "zrt_all_gather_start", ZRT_MEM_COMM,
                   {n(start.getWait().getResult()), n(start.getInput())});
        return success();
      })
      .Case([&](ReduceScatterStartOp start) {
        lowerStart(start, "zrt_reduce_scatter_start", ZRT_MEM_GRAD,
                   {n(start.getInput()), n(start.getWait().getResult())});
        return success();
      })
      .Case([&](AllReduceStartOp start) {
        bool gradient = gradients.contains(start.getWait().getResult());
        lowerStart(start, "zrt_all_reduce_start",
                   gradient ? ZRT_MEM_GRAD : ZRT_MEM_ACTIVATION,
                   {n(start.getInput())}, start.getInput());
        return success();
      })
      .Case([&](PackOp pack) {
        lowerPacking(pack.getResult(), pack.getInputs(), pack.getChunks(),
                     /*intoFlat=*/true);
        return success();
      })
      .Case([&](UnpackOp unpack) {
        lowerPacking(unpack.getInput(), unpack.getResults(),
                     unpack.getChunks(), /*intoFlat=*/false);
        return success();
      })
      .Case([&](WaitOp wait) {
        call(loc, "zrt_wait", {handles.lookup(wait.getFuture())});
        return success();
      })
      .Case([&](ReleaseOp) {
        return success(); // Its operand dies here; freeDeadValues frees it.
      })
      .Default([&](Operation *) {
        return op->emitOpError("cannot be lowered to the runtime: no zrt "
                               "kernel implements it");
      });
}

/// zero.pack (`intoFlat`) and zero.unpack: one zrt_copy per chunk of each
/// member. The flat buffer is zero-filled when allocated, so the padding of
/// a member's last chunk needs no copy.
void StepLowering::lowerPacking(Value flat, ValueRange members, int64_t chunks,
                                bool intoFlat) {
  Location loc = flat.getLoc();
  // A packed bucket is communication staging; unpacked, a gathered unit is
  // gathered copies and a reduced bucket this rank's gradient shards.
  Value gathered = flat;
  if (auto wait = flat.getDefiningOp<WaitOp>())
    gathered = wait.getFuture();
  bool fromGather =
      gathered.getDefiningOp<AllGatherOp>() ||
      gathered.getDefiningOp<AllGatherStartOp>();
  if (intoFlat)
    bufferFor(flat, ZRT_MEM_COMM);
  else
    for (Value member : members)
      bufferFor(member, fromGather ? ZRT_MEM_COMM : ZRT_MEM_GRAD);
  int64_t elementBytes =
      (cast<RankedTensorType>(flat.getType()).getElementTypeBitWidth() + 7) /
      8;
  int64_t chunkStride = 0; // Elements of one chunk of the flat buffer.
  for (Value member : members)
    chunkStride += shardSize(getNumElements(member.getType()), chunks);
  int64_t offsetInChunk = 0;
  for (Value member : members) {
    int64_t numel = getNumElements(member.getType());
    int64_t chunk = shardSize(numel, chunks);
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t count = std::min(chunk, numel - c * chunk);
      if (count <= 0)
        break;
      Value memberPtr = rt.offsetPtr(loc, buf(member), c * chunk * elementBytes);
      Value flatPtr = rt.offsetPtr(
          loc, buf(flat), (c * chunkStride + offsetInChunk) * elementBytes);
      call(loc, "zrt_copy",
           {intoFlat ? memberPtr : flatPtr, intoFlat ? flatPtr : memberPtr,
            rt.i64(loc, count * elementBytes)});
    }
    offsetInChunk += chunk;
  }
}

void StepLowering::freeDeadValues(Operation *op) {
  // What dies here: this op's last operands, and the inputs of collectives
  // whose wait this is (their last use was moved to the wait).
  llvm::SmallSetVector<Value, 4> dying;
  for (Value value : deaths.lookup(position))
    dying.insert(value);
  for (Value result : op->getResults())
    if (result.use_empty())
      dying.insert(result);
  for (Value value : dying)
    if (owned.remove(value))
      rt.call(op->getLoc(), "zrt_free", {ctx, buf(value)});
}

/// Results that update an argument go to its buffer; the one result that
/// does not is the loss (absent from the optimizer step of gradient
/// accumulation), copied to `lossOut`.
void StepLowering::lowerReturn(func::ReturnOp ret, Value lossOut) {
  Location loc = ret.getLoc();
  for (Value value : ret.getOperands()) {
    Value dest = destinations.lookup(value);
    Value target = dest ? buf(dest) : lossOut;
    if (buf(value) != target)
      call(loc, "zrt_copy",
           {buf(value), target, rt.i64(loc, getByteSize(value.getType()))});
  }
}

LogicalResult StepLowering::lower(Value argsArray, Value lossOut) {
  analyse();
  Type ptr = rt.ptrType();
  for (BlockArgument arg : trainStep.getArguments()) {
    Value slot = LLVM::GEPOp::create(b, arg.getLoc(), ptr, ptr, argsArray,
                                     ArrayRef<LLVM::GEPArg>{
                                         static_cast<int32_t>(arg.getArgNumber())});
    buffers[arg] = LLVM::LoadOp::create(b, arg.getLoc(), ptr, slot);
  }
  for (Operation &op : trainStep.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      lowerReturn(ret, lossOut);
    else if (failed(lowerOp(&op)))
      return failure();
    freeDeadValues(&op);
    ++position;
  }
  return success();
}

struct LowerToRuntimePass
    : zero::impl::LowerToRuntimeBase<LowerToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp trainStep = lookupFunction(
        module, kTrainStepFuncName, getArgument(),
        "run zero-insert-collectives first");
    if (!trainStep || failed(emitProgramDescription(trainStep, getArgument())))
      return signalPassFailure();
    // Without gradient accumulation the optimizer runs inside the step and
    // the apply function the runtime calls after each step is empty.
    auto trainApply = module.lookupSymbol<func::FuncOp>(kTrainApplyFuncName);
    if (failed(emitEntry(trainStep, "zero_program_step", /*withLoss=*/true)) ||
        failed(emitEntry(trainApply, "zero_program_apply", /*withLoss=*/false)))
      return signalPassFailure();
    trainStep.erase();
    if (trainApply)
      trainApply.erase();
  }

  /// @name(%ctx, %args[, %loss]) running `body` (nothing when it is null).
  LogicalResult emitEntry(func::FuncOp body, StringRef name, bool withLoss) {
    ModuleOp module = getOperation();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    RuntimeCalls rt(module, b);
    Type ptr = rt.ptrType();
    Location loc = body ? body.getLoc() : module.getLoc();
    SmallVector<Type> argTypes(withLoss ? 3 : 2, ptr);
    auto entry =
        func::FuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
    Block *block = entry.addEntryBlock();
    b.setInsertionPointToStart(block);
    if (body) {
      StepLowering lowering(body, rt, b, block->getArgument(0));
      if (failed(lowering.lower(block->getArgument(1),
                                withLoss ? block->getArgument(2) : Value())))
        return failure();
    }
    func::ReturnOp::create(b, loc);
    return success();
  }
};
} // namespace
