//===- Collectives.cpp - zero ops to zrt collectives and copies -----------===//
//
// The pattern family of zero-lower-to-zrt for the zero dialect: the
// collectives (blocking, or started and waited for), this rank's shard of a
// whole tensor, and the packing of buckets. A gathered copy is comm memory,
// a reduced shard gradient memory. A started collective's future becomes
// the zrt handle its wait completes.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/ZeroToZrt/ZeroToZrt.h"
#include "passes/Utils/PassUtils.h"

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {
using MemCategory = zrt::MemCategory;

/// zero.pack (`intoFlat`) and zero.unpack: one zrt.copy per chunk of each
/// member, between the buffers `flatBuffer` and `memberBuffers`. The flat
/// buffer is zero-filled when allocated, so the padding of a member's last
/// chunk needs no copy.
void copyChunks(OpBuilder &b, Location loc, Value flat, Value flatBuffer,
                ValueRange members, ValueRange memberBuffers, int64_t chunks,
                bool intoFlat) {
  int64_t elementBytes =
      (cast<RankedTensorType>(flat.getType()).getElementTypeBitWidth() + 7) / 8;
  int64_t chunkStride = 0; // Elements of one chunk of the flat buffer.
  for (Value member : members)
    chunkStride += shardSize(getNumElements(member.getType()), chunks);
  int64_t offsetInChunk = 0;
  for (auto [member, memberBuffer] : llvm::zip_equal(members, memberBuffers)) {
    int64_t numel = getNumElements(member.getType());
    int64_t chunk = shardSize(numel, chunks);
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t count = std::min(chunk, numel - c * chunk);
      if (count <= 0)
        break;
      int64_t memberOffset = c * chunk * elementBytes;
      int64_t flatOffset = (c * chunkStride + offsetInChunk) * elementBytes;
      if (intoFlat)
        zrt::CopyOp::create(b, loc, memberBuffer, flatBuffer,
                            count * elementBytes, memberOffset, flatOffset);
      else
        zrt::CopyOp::create(b, loc, flatBuffer, memberBuffer,
                            count * elementBytes, flatOffset, memberOffset);
    }
    offsetInChunk += chunk;
  }
}

/// The tensor or bucket a collective moves, as the passes that made it
/// named its location (withCollectiveLabel); null when unnamed.
StringAttr labelOf(Operation *collective) {
  StringRef label = getCollectiveLabel(collective->getLoc());
  return label.empty() ? StringAttr()
                       : StringAttr::get(collective->getContext(), label);
}

/// The ranks a zero collective runs over, as the runtime names them: the
/// axis of its zero.group (@shard, @replica), or every rank (@dp).
zrt::Group groupOf(CollectiveOpInterface collective) {
  Operation *op = collective;
  GroupOp group = lookupGroup(
      op, FlatSymbolRefAttr::get(op->getContext(), collective.getGroupName()));
  if (!group || !group.getAxis())
    return zrt::Group::World;
  return *group.getAxis() == MeshAxis::Shard ? zrt::Group::Shard
                                             : zrt::Group::Replica;
}

/// A zero.*_start: the buffer of its wait's result, and the started zrt
/// collective, whose handle replaces the future.
template <typename ZrtStartOp, typename StartOp>
void lowerStart(StepLowering &l, StartOp start, Value input, OpBuilder &b,
                MemCategory category, Value inPlace = nullptr) {
  Value result = start.getWait().getResult();
  Value out =
      l.bufferFor(result, category, inPlace, l.positionOf(start.getWait()));
  l.setHandle(start.getFuture(),
              ZrtStartOp::create(b, start.getLoc(),
                                 zrt::HandleType::get(start.getContext()),
                                 input, out, groupOf(start),
                                 /*staging_offset=*/nullptr, labelOf(start)));
}
} // namespace

// The lowering of each op: its StepPattern's lower().
namespace zero {

template <>
void StepPattern<AllGatherOp>::lower(AllGatherOp gather, Adaptor a,
                                     OpBuilder &b) const {
  Value full = l.bufferFor(gather, MemCategory::Comm);
  zrt::AllGatherOp::create(b, gather.getLoc(), a.getInput(), full,
                           groupOf(gather), /*staging_offset=*/nullptr,
                           labelOf(gather));
}

template <>
void StepPattern<ReduceScatterOp>::lower(ReduceScatterOp scatter, Adaptor a,
                                         OpBuilder &b) const {
  Value shard = l.bufferFor(scatter, MemCategory::Grad);
  zrt::ReduceScatterOp::create(b, scatter.getLoc(), a.getInput(), shard,
                               groupOf(scatter), /*staging_offset=*/nullptr,
                               labelOf(scatter));
}

template <>
void StepPattern<AllReduceOp>::lower(AllReduceOp reduce, Adaptor a,
                                     OpBuilder &b) const {
  Value y = l.result(reduce, reduce.getInput());
  zrt::AllReduceOp::create(b, reduce.getLoc(), a.getInput(), y, groupOf(reduce),
                           /*staging_offset=*/nullptr, labelOf(reduce));
}

template <>
void StepPattern<LocalShardOp>::lower(LocalShardOp slice, Adaptor a,
                                      OpBuilder &b) const {
  Value shard = l.bufferFor(slice, MemCategory::Optimizer);
  zrt::ShardSliceOp::create(b, slice.getLoc(), a.getInput(), shard);
}

/// Optimizer offload: the host's copy of a device value is host staging
/// memory; a new parameter copied up lands where the device reads it, in
/// place of the parameter (stages 0, 3) or in a shard that is gathered
/// (stages 1, 2), as the optimizer's cast does without offload.
template <>
void StepPattern<ToHostOp>::lower(ToHostOp copy, Adaptor a,
                                  OpBuilder &b) const {
  Value dst = l.bufferFor(copy, MemCategory::HostStaging);
  zrt::CopyToHostOp::create(b, copy.getLoc(), a.getInput(), dst);
}

template <>
void StepPattern<ToDeviceOp>::lower(ToDeviceOp copy, Adaptor a,
                                    OpBuilder &b) const {
  bool gathered = llvm::all_of(copy->getUsers(), [](Operation *user) {
    return isa<AllGatherOp, AllGatherStartOp>(user);
  });
  Value dst =
      l.bufferFor(copy, gathered ? MemCategory::Comm : MemCategory::Param);
  zrt::CopyToDeviceOp::create(b, copy.getLoc(), a.getInput(), dst);
}

template <>
void StepPattern<AllGatherStartOp>::lower(AllGatherStartOp start, Adaptor a,
                                          OpBuilder &b) const {
  lowerStart<zrt::AllGatherStartOp>(l, start, a.getInput(), b,
                                    MemCategory::Comm);
}

template <>
void StepPattern<ReduceScatterStartOp>::lower(ReduceScatterStartOp start,
                                              Adaptor a, OpBuilder &b) const {
  lowerStart<zrt::ReduceScatterStartOp>(l, start, a.getInput(), b,
                                        MemCategory::Grad);
}

template <>
void StepPattern<AllReduceStartOp>::lower(AllReduceStartOp start, Adaptor a,
                                          OpBuilder &b) const {
  bool gradient = l.isGradient(start.getWait().getResult());
  lowerStart<zrt::AllReduceStartOp>(
      l, start, a.getInput(), b,
      gradient ? MemCategory::Grad : MemCategory::Activation, start.getInput());
}

/// The result of a wait is the buffer its start wrote (lowerStart).
template <>
void StepPattern<WaitOp>::lower(WaitOp wait, Adaptor a, OpBuilder &b) const {
  zrt::WaitOp::create(b, wait.getLoc(), a.getFuture());
}

/// Nothing to do: its operand dies here, and the buffer assignment frees it.
template <>
void StepPattern<ReleaseOp>::lower(ReleaseOp, Adaptor, OpBuilder &) const {}

/// A packed bucket is communication staging.
template <>
void StepPattern<PackOp>::lower(PackOp pack, Adaptor a, OpBuilder &b) const {
  Value flat = l.bufferFor(pack.getResult(), MemCategory::Comm);
  copyChunks(b, pack.getLoc(), pack.getResult(), flat, pack.getInputs(),
             a.getInputs(), pack.getChunks(), /*intoFlat=*/true);
}

/// Unpacked, a gathered unit is gathered copies and a reduced bucket this
/// rank's gradient shards.
template <>
void StepPattern<UnpackOp>::lower(UnpackOp unpack, Adaptor a,
                                  OpBuilder &b) const {
  Value gathered = unpack.getInput();
  if (auto wait = gathered.getDefiningOp<WaitOp>())
    gathered = wait.getFuture();
  bool fromGather = gathered.getDefiningOp<AllGatherOp>() ||
                    gathered.getDefiningOp<AllGatherStartOp>();
  SmallVector<Value> members;
  for (Value member : unpack.getResults())
    members.push_back(l.bufferFor(member, fromGather ? MemCategory::Comm
                                                     : MemCategory::Grad));
  copyChunks(b, unpack.getLoc(), unpack.getInput(), a.getInput(),
             unpack.getResults(), members, unpack.getChunks(),
             /*intoFlat=*/false);
}
} // namespace zero

void zero::populateShardingLoweringPatterns(RewritePatternSet &patterns,
                                            const TypeConverter &converter,
                                            StepLowering &lowering) {
  patterns
      .add<StepPattern<AllGatherOp>, StepPattern<ReduceScatterOp>,
           StepPattern<AllReduceOp>, StepPattern<LocalShardOp>,
           StepPattern<AllGatherStartOp>, StepPattern<ReduceScatterStartOp>,
           StepPattern<AllReduceStartOp>, StepPattern<WaitOp>,
           StepPattern<ReleaseOp>, StepPattern<PackOp>, StepPattern<UnpackOp>,
           StepPattern<ToHostOp>, StepPattern<ToDeviceOp>>(converter, lowering);
}
