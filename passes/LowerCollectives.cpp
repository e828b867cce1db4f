//===- LowerCollectives.cpp - zero ops to zrt collectives and copies ------===//
//
// The pattern family of zero-lower-to-runtime for the zero dialect: the
// collectives (blocking, or started and waited for), this rank's shard of a
// whole tensor, and the packing of buckets. A gathered copy is comm memory,
// a reduced shard gradient memory.
//
//===----------------------------------------------------------------------===//
#include "passes/PassUtils.h"
#include "passes/StepLowering.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {
using MemCategory = zrt::MemCategory;

/// zero.pack (`intoFlat`) and zero.unpack: one zrt.copy per chunk of each
/// member. The flat buffer is zero-filled when allocated, so the padding of
/// a member's last chunk needs no copy.
void lowerPacking(StepLowering &l, Value flat, ValueRange members,
                  int64_t chunks, bool intoFlat) {
  OpBuilder &b = l.builder();
  Location loc = flat.getLoc();
  // A packed bucket is communication staging; unpacked, a gathered unit is
  // gathered copies and a reduced bucket this rank's gradient shards.
  Value gathered = flat;
  if (auto wait = flat.getDefiningOp<WaitOp>())
    gathered = wait.getFuture();
  bool fromGather = gathered.getDefiningOp<AllGatherOp>() ||
                    gathered.getDefiningOp<AllGatherStartOp>();
  if (intoFlat)
    l.bufferFor(flat, MemCategory::Comm);
  else
    for (Value member : members)
      l.bufferFor(member, fromGather ? MemCategory::Comm : MemCategory::Grad);
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
      int64_t memberOffset = c * chunk * elementBytes;
      int64_t flatOffset = (c * chunkStride + offsetInChunk) * elementBytes;
      if (intoFlat)
        zrt::CopyOp::create(b, loc, l.buf(member), l.buf(flat),
                            count * elementBytes, memberOffset, flatOffset);
      else
        zrt::CopyOp::create(b, loc, l.buf(flat), l.buf(member),
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

/// A zero.*_start: the buffer of its wait's result, and the started zrt
/// collective, whose handle the wait will complete.
template <typename ZrtStartOp, typename StartOp>
void lowerStart(StepLowering &l, StartOp start, MemCategory category,
                Value inPlace = nullptr) {
  Value result = start.getWait().getResult();
  Value out = l.bufferFor(result, category, inPlace,
                          l.positionOf(start.getWait()));
  l.handles[start.getFuture()] =
      ZrtStartOp::create(l.builder(), start.getLoc(),
                         zrt::HandleType::get(start.getContext()),
                         l.buf(start.getInput()), out,
                         /*staging_offset=*/nullptr, labelOf(start));
}
} // namespace

std::optional<LogicalResult> zero::lowerShardingOp(StepLowering &l,
                                                   Operation *op) {
  OpBuilder &b = l.builder();
  Location loc = op->getLoc();
  using Result = std::optional<LogicalResult>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](AllGatherOp gather) {
        Value full = l.bufferFor(gather, MemCategory::Comm);
        zrt::AllGatherOp::create(b, loc, l.buf(gather.getInput()), full,
                                 /*staging_offset=*/nullptr, labelOf(gather));
        return success();
      })
      .Case([&](ReduceScatterOp scatter) {
        Value shard = l.bufferFor(scatter, MemCategory::Grad);
        zrt::ReduceScatterOp::create(b, loc, l.buf(scatter.getInput()), shard,
                                     /*staging_offset=*/nullptr,
                                     labelOf(scatter));
        return success();
      })
      .Case([&](AllReduceOp reduce) {
        Value y = l.result(reduce, reduce.getInput());
        zrt::AllReduceOp::create(b, loc, l.buf(reduce.getInput()), y,
                                 /*staging_offset=*/nullptr, labelOf(reduce));
        return success();
      })
      .Case([&](LocalShardOp slice) {
        Value shard = l.bufferFor(slice, MemCategory::Optimizer);
        zrt::ShardSliceOp::create(b, loc, l.buf(slice.getInput()), shard);
        return success();
      })
      .Case([&](AllGatherStartOp start) {
        lowerStart<zrt::AllGatherStartOp>(l, start, MemCategory::Comm);
        return success();
      })
      .Case([&](ReduceScatterStartOp start) {
        lowerStart<zrt::ReduceScatterStartOp>(l, start, MemCategory::Grad);
        return success();
      })
      .Case([&](AllReduceStartOp start) {
        bool gradient = l.isGradient(start.getWait().getResult());
        lowerStart<zrt::AllReduceStartOp>(
            l, start, gradient ? MemCategory::Grad : MemCategory::Activation,
            start.getInput());
        return success();
      })
      .Case([&](PackOp pack) {
        lowerPacking(l, pack.getResult(), pack.getInputs(), pack.getChunks(),
                     /*intoFlat=*/true);
        return success();
      })
      .Case([&](UnpackOp unpack) {
        lowerPacking(l, unpack.getInput(), unpack.getResults(),
                     unpack.getChunks(), /*intoFlat=*/false);
        return success();
      })
      .Case([&](WaitOp wait) {
        zrt::WaitOp::create(b, loc, l.handles.lookup(wait.getFuture()));
        return success();
      })
      .Case([&](ReleaseOp) {
        return success(); // Its operand dies here; the lowering frees it.
      })
      .Default([](Operation *) { return std::nullopt; });
}
