//===- ZrtOps.cpp - verifiers of the zrt dialect --------------------------===//
//
// What a kernel would otherwise read out of bounds: each verifier checks
// that the buffers' shapes agree the way the C function's sizes must.
//
//===----------------------------------------------------------------------===//
#include "dialects/zrt/ZrtDialect.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace zero::zrt;

#include "dialects/zrt/ZrtInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// KernelOpInterface: FLOPs by zrt.h's formulas
//===----------------------------------------------------------------------===//

/// zrt_matmul_flops of a product whose result `c` is m x n and whose `a`
/// holds m x k (stored either way round).
static int64_t productFlops(Value a, Value c) {
  auto cType = cast<MemRefType>(c.getType());
  int64_t m = cType.getShape()[0], n = cType.getShape()[1];
  int64_t k = m ? cast<MemRefType>(a.getType()).getNumElements() / m : 0;
  return zrt_matmul_flops(m, n, k);
}

int64_t MatmulOp::getFlops() { return productFlops(getA(), getC()); }
int64_t MatmulBiasOp::getFlops() { return productFlops(getA(), getC()); }
int64_t AttentionOp::getFlops() {
  return zrt_attention_flops(getQ().getType().getShape()[0], getSeqLen(),
                             getNumHeads(), getHeadDim(), /*backward=*/0);
}
int64_t AttentionGradOp::getFlops() {
  return zrt_attention_flops(getQ().getType().getShape()[0], getSeqLen(),
                             getNumHeads(), getHeadDim(), /*backward=*/1);
}

#define GET_OP_CLASSES
#include "dialects/zrt/ZrtOps.cpp.inc"

static ArrayRef<int64_t> shapeOf(Value buffer) {
  return cast<MemRefType>(buffer.getType()).getShape();
}

static Type elementOf(Value buffer) {
  return cast<MemRefType>(buffer.getType()).getElementType();
}

/// Fails with "`what` has N elements, expected M" unless they match.
static LogicalResult checkElements(Operation *op, StringRef what,
                                   Value buffer, int64_t expected) {
  int64_t n = getNumElements(buffer);
  if (n == expected)
    return success();
  return op->emitOpError() << what << " has " << n << " elements, expected "
                           << expected;
}

static LogicalResult checkSameElementType(Operation *op, ValueRange buffers) {
  for (Value buffer : buffers)
    if (elementOf(buffer) != elementOf(buffers.front()))
      return op->emitOpError("expects buffers of one element type, got ")
             << elementOf(buffers.front()) << " and " << elementOf(buffer);
  return success();
}

LogicalResult DeclareArgOp::verify() {
  if (cast<RankedTensorType>(getType()).getRank() > 4)
    return emitOpError("declares a tensor of rank ")
           << cast<RankedTensorType>(getType()).getRank()
           << "; the runtime takes at most 4 dimensions";
  return success();
}

AllocOp zero::zrt::getAllocation(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewOp>())
    buffer = view.getSource();
  return buffer.getDefiningOp<AllocOp>();
}

SmallVector<Value> zero::zrt::getAliases(Value buffer) {
  SmallVector<Value> all{buffer};
  for (size_t i = 0; i < all.size(); ++i)
    for (Operation *user : all[i].getUsers())
      if (auto view = dyn_cast<ViewOp>(user))
        all.push_back(view.getResult());
  return all;
}

LogicalResult FreeOp::verify() {
  if (!getAllocation(getBuffer()))
    return emitOpError("frees a buffer that no zrt.alloc returned");
  return success();
}

LogicalResult ViewOp::verify() {
  if (getByteSize(getSource()) != getByteSize(getResult()))
    return emitOpError("views ") << getByteSize(getSource())
                                 << " bytes as a buffer of "
                                 << getByteSize(getResult()) << " bytes";
  return success();
}

/// A buffer zrt.alloc made is in host memory exactly when its category is
/// a host one; an argument's memory is the description's to say.
static LogicalResult verifyOffloadCopy(Operation *op, Value src, Value dst,
                                       bool toHost) {
  auto check = [&](Value buffer, bool wantHost,
                   StringRef which) -> LogicalResult {
    AllocOp alloc = getAllocation(buffer);
    if (!alloc ||
        bool(zrt_mem_category_is_host(int32_t(alloc.getCategory()))) ==
            wantHost)
      return success();
    return op->emitOpError() << "expects " << which << " in "
                             << (wantHost ? "host" : "device")
                             << " memory, got a buffer of category '"
                             << stringifyMemCategory(alloc.getCategory())
                             << "'";
  };
  if (failed(check(src, !toHost, "the source")))
    return failure();
  return check(dst, toHost, "the destination");
}

LogicalResult CopyToHostOp::verify() {
  return verifyOffloadCopy(*this, getSrc(), getDst(), /*toHost=*/true);
}

LogicalResult CopyToDeviceOp::verify() {
  return verifyOffloadCopy(*this, getSrc(), getDst(), /*toHost=*/false);
}

LogicalResult CopyOp::verify() {
  int64_t bytes = getBytes(), srcOffset = getSrcOffset(),
          dstOffset = getDstOffset();
  if (bytes < 0 || srcOffset < 0 || dstOffset < 0)
    return emitOpError("expects non-negative sizes and offsets");
  // The ends in unsigned arithmetic: two non-negative int64_t values add up
  // exactly there, where their signed sum may overflow.
  uint64_t srcEnd = uint64_t(srcOffset) + uint64_t(bytes);
  uint64_t dstEnd = uint64_t(dstOffset) + uint64_t(bytes);
  if (srcEnd > uint64_t(getByteSize(getSrc())))
    return emitOpError("reads bytes [")
           << srcOffset << ", " << srcEnd << ") of a source of "
           << getByteSize(getSrc()) << " bytes";
  if (dstEnd > uint64_t(getByteSize(getDst())))
    return emitOpError("writes bytes [")
           << dstOffset << ", " << dstEnd << ") of a destination of "
           << getByteSize(getDst()) << " bytes";
  return success();
}

LogicalResult CastOp::verify() {
  return checkElements(*this, "the destination", getDst(),
                       getNumElements(getSrc()));
}

LogicalResult ShardSliceOp::verify() {
  if (failed(checkSameElementType(*this, {getFull(), getShard()})))
    return failure();
  if (shapeOf(getShard()).size() != 1 ||
      getNumElements(getShard()) > getNumElements(getFull()))
    return emitOpError("expects a 1-D shard no larger than the whole buffer");
  return success();
}

/// m, n and k of a product c = op(a) op(b), or a diagnostic.
static LogicalResult verifyProduct(Operation *op, Value a, Value b, Value c,
                                   bool transposeA, bool transposeB) {
  if (failed(checkSameElementType(op, {a, b, c})))
    return failure();
  ArrayRef<int64_t> as = shapeOf(a), bs = shapeOf(b), cs = shapeOf(c);
  int64_t m = transposeA ? as[1] : as[0], k = transposeA ? as[0] : as[1];
  int64_t kb = transposeB ? bs[1] : bs[0], n = transposeB ? bs[0] : bs[1];
  if (k != kb || cs[0] != m || cs[1] != n)
    return op->emitOpError("multiplies ")
           << m << "x" << k << " by " << kb << "x" << n << " into " << cs[0]
           << "x" << cs[1];
  return success();
}

LogicalResult MatmulOp::verify() {
  return verifyProduct(*this, getA(), getB(), getC(), getTransposeA(),
                       getTransposeB());
}

LogicalResult MatmulBiasOp::verify() {
  if (failed(verifyProduct(*this, getA(), getB(), getC(), getTransposeA(),
                           getTransposeB())))
    return failure();
  bool gelu = getEpilogue() == Epilogue::BiasGelu;
  if (gelu != bool(getPreActivation()))
    return emitOpError(gelu ? "with a bias_gelu epilogue needs a "
                              "pre-activation buffer"
                            : "has a pre-activation buffer but no GELU");
  if (getPreActivation() && getPreActivation().getType() != getC().getType())
    return emitOpError("expects the pre-activation buffer of c's type");
  return checkElements(*this, "the bias", getBias(), shapeOf(getC())[1]);
}

LogicalResult BiasAddOp::verify() {
  return checkElements(*this, "the bias", getBias(), shapeOf(getX())[1]);
}

LogicalResult SumRowsOp::verify() {
  return checkElements(*this, "the row sum", getY(), shapeOf(getX())[1]);
}

/// Logits [rows, classes] and one label a row.
static LogicalResult verifyLossShapes(Operation *op, Value logits,
                                      Value labels) {
  return checkElements(op, "the label buffer", labels, shapeOf(logits)[0]);
}

LogicalResult SoftmaxXentOp::verify() {
  if (failed(verifyLossShapes(*this, getLogits(), getLabels())))
    return failure();
  return checkElements(*this, "the loss", getLoss(), 1);
}

LogicalResult SoftmaxXentGradOp::verify() {
  if (failed(verifyLossShapes(*this, getLogits(), getLabels())))
    return failure();
  return checkElements(*this, "the loss gradient", getDloss(), 1);
}

LogicalResult SoftmaxXentFusedOp::verify() {
  if (failed(verifyLossShapes(*this, getLogits(), getLabels())) ||
      failed(checkElements(*this, "the loss gradient", getDloss(), 1)))
    return failure();
  return checkElements(*this, "the loss", getLoss(), 1);
}

LogicalResult EmbeddingOp::verify() {
  if (shapeOf(getOut())[1] != shapeOf(getTable())[1])
    return emitOpError("expects rows of the table's width");
  return checkElements(*this, "the id buffer", getIds(),
                       shapeOf(getOut())[0]);
}

LogicalResult EmbeddingGradOp::verify() {
  if (shapeOf(getDout())[1] != shapeOf(getDtable())[1])
    return emitOpError("expects rows of the table's width");
  return checkElements(*this, "the id buffer", getIds(),
                       shapeOf(getDout())[0]);
}

LogicalResult LayerNormOp::verify() {
  int64_t cols = shapeOf(getX())[1];
  if (failed(checkElements(*this, "gamma", getGamma(), cols)))
    return failure();
  return checkElements(*this, "beta", getBeta(), cols);
}

LogicalResult LayerNormGradOp::verify() {
  return checkElements(*this, "gamma", getGamma(), shapeOf(getX())[1]);
}

LogicalResult RmsNormOp::verify() {
  return checkElements(*this, "gamma", getGamma(), shapeOf(getX())[1]);
}

LogicalResult RmsNormGradOp::verify() {
  return checkElements(*this, "gamma", getGamma(), shapeOf(getX())[1]);
}

LogicalResult RopeOp::verify() {
  ArrayRef<int64_t> s = shapeOf(getX());
  if (s[0] % getSeqLen() || s[1] % getNumHeads() ||
      (s[1] / getNumHeads()) % 2)
    return emitOpError("expects [batch * ")
           << getSeqLen() << ", " << getNumHeads()
           << " * even head_dim], got " << s[0] << "x" << s[1];
  int64_t half = s[1] / getNumHeads() / 2;
  if (int64_t(getInvFreq().size()) != half)
    return emitOpError("expects ") << half << " inverse frequencies, got "
                                   << getInvFreq().size();
  return success();
}

/// q [batch * seq, heads * d], k and v [batch * seq, kv_heads * d].
static LogicalResult verifyAttentionShapes(Operation *op, Value q, Value k,
                                           int64_t seq, int64_t heads,
                                           int64_t kvHeads) {
  ArrayRef<int64_t> qs = shapeOf(q), ks = shapeOf(k);
  // k's columns are kvHeads heads of q's head_dim; kvHeads divides heads,
  // so the product is at most q's columns and cannot overflow.
  if (qs[0] % seq || qs[1] % heads || heads % kvHeads || ks[0] != qs[0] ||
      ks[1] != kvHeads * (qs[1] / heads))
    return op->emitOpError("expects q of [batch * ")
           << seq << ", " << heads << " * head_dim] and k, v of [batch * "
           << seq << ", " << kvHeads << " * head_dim], got " << qs[0] << "x"
           << qs[1] << " and " << ks[0] << "x" << ks[1];
  return success();
}

LogicalResult AttentionOp::verify() {
  return verifyAttentionShapes(*this, getQ(), getK(), getSeqLen(),
                               getNumHeads(), getNumKvHeads());
}

LogicalResult AttentionGradOp::verify() {
  return verifyAttentionShapes(*this, getQ(), getK(), getSeqLen(),
                               getNumHeads(), getNumKvHeads());
}

/// A slice of `narrow` columns at `offset` of `wide`.
static LogicalResult verifySlice(Operation *op, Value wide, Value narrow,
                                 int64_t offset) {
  ArrayRef<int64_t> w = shapeOf(wide), n = shapeOf(narrow);
  if (w[0] != n[0] || offset < 0 || offset + n[1] > w[1])
    return op->emitOpError("takes columns [")
           << offset << ", " << offset + n[1] << ") of " << w[0] << "x" << w[1]
           << " as " << n[0] << "x" << n[1];
  return success();
}

LogicalResult SliceColsOp::verify() {
  return verifySlice(*this, getX(), getY(), getOffset());
}

LogicalResult SliceColsGradOp::verify() {
  return verifySlice(*this, getDx(), getDy(), getOffset());
}

LogicalResult AccumulateExactOp::verify() {
  return checkElements(*this, "the accumulator", getAcc(),
                       getNumElements(getX()));
}

LogicalResult SumSquaresExactOp::verify() {
  if (getNumElements(getAcc()) != 1)
    return emitOpError("expects a one-element accumulator, got ")
           << getAcc().getType();
  return success();
}

LogicalResult FromExactOp::verify() {
  return checkElements(*this, "the output", getOut(),
                       getNumElements(getExact()));
}

LogicalResult WatchGradientOp::verify() {
  if (getNumElements(getSumSquares()) != 1)
    return emitOpError("expects a one-element squared norm, got ")
           << getSumSquares().getType();
  if (getParam().empty())
    return emitOpError("expects the name of a parameter");
  return success();
}

/// An optimizer update: a gradient of the parameter's elements, and
/// hyperparameters of one element (the custom form gives them one type).
template <typename UpdateOp> static LogicalResult verifyUpdate(UpdateOp op) {
  if (failed(checkElements(op, "the gradient", op.getGrad(),
                           getNumElements(op.getParam()))))
    return failure();
  if (getNumElements(op.getLr()) != 1)
    return op.emitOpError("expects hyperparameters of one element, got ")
           << op.getLr().getType();
  return success();
}

LogicalResult AdamWOp::verify() { return verifyUpdate(*this); }
LogicalResult LionOp::verify() { return verifyUpdate(*this); }

/// An all-gather or reduce-scatter: a 1-D shard of at most the whole
/// buffer; an all-reduce: two buffers of one type.
GroupSizes GroupSizes::declaredIn(Operation *describe) {
  GroupSizes sizes;
  if (!describe)
    return sizes;
  describe->walk([&](Operation *op) {
    if (auto program = dyn_cast<DeclareProgramOp>(op))
      sizes.worldSize = program.getWorldSize();
    else if (auto groups = dyn_cast<DeclareShardGroupsOp>(op))
      sizes.shardGroupSize = groups.getSize();
  });
  return sizes;
}

static LogicalResult verifyCollective(CollectiveOpInterface op) {
  Operation *operation = op;
  if (failed(checkSameElementType(operation, {op.getInput(), op.getOutput()})))
    return failure();
  CollectiveShape shape = getCollectiveInfo(op.getCollectiveKind()).shape;
  if (shape == CollectiveShape::Whole) {
    if (op.getInput().getType() != op.getOutput().getType())
      return operation->emitOpError("expects input and output of one type");
    return success();
  }
  Value shard =
      shape == CollectiveShape::Gather ? op.getInput() : op.getOutput();
  if (shapeOf(shard).size() != 1 ||
      op.getShardElements() > op.getWholeElements() ||
      op.getShardElements() < 1)
    return operation->emitOpError("expects a 1-D shard of 1 to ")
           << op.getWholeElements() << " elements, got "
           << shard.getType();
  return success();
}

LogicalResult AllGatherOp::verify() { return verifyCollective(*this); }
LogicalResult AllGatherStartOp::verify() { return verifyCollective(*this); }
LogicalResult ReduceScatterOp::verify() { return verifyCollective(*this); }
LogicalResult ReduceScatterStartOp::verify() {
  return verifyCollective(*this);
}
LogicalResult AllReduceOp::verify() { return verifyCollective(*this); }
LogicalResult AllReduceStartOp::verify() { return verifyCollective(*this); }
