//===- BucketCollectives.cpp - few large collectives, not many small ones -===//
//
// A collective costs a fixed latency plus its bytes over the bandwidth. A
// transformer block has a dozen parameters, half of them vectors of a few
// KB, so per-tensor collectives are latency-bound. This pass groups them:
// parameter gathers by unit (one transformer block, as FSDP wraps them) and
// gradient reductions by size (buckets, as PyTorch DDP and DeepSpeed).
//
// A bucket is packed into one flat buffer (zero.pack), moved by one
// collective and unpacked (zero.unpack). Every tensor keeps its own
// zero-padded shard layout inside the bucket, so the shards the optimizer
// sees, the bytes moved and the values are those of the separate
// collectives; the price is the copy in and out of the bucket.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

#include "llvm/ADT/MapVector.h"

namespace zero {
#define GEN_PASS_DEF_BUCKETCOLLECTIVES
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {

/// The flat buffer `zero.pack` makes of `members` in `chunks` chunks.
RankedTensorType packedType(ValueRange members, int64_t chunks) {
  int64_t elements = 0;
  for (Value member : members)
    elements += chunks * shardSize(getNumElements(member.getType()), chunks);
  Type elementType =
      cast<RankedTensorType>(members.front().getType()).getElementType();
  return RankedTensorType::get({elements}, elementType);
}

/// Hybrid sharding: the all-reduce over @replica that adds the shard
/// groups' sums of `op`'s shard, when `op` is such a reduce-scatter. It
/// travels with the reduce-scatter: a bucket is reduce-scattered within the
/// group, and its shard all-reduced across the groups.
AllReduceOp acrossReplicasOf(Operation *op) {
  if (!isa<ReduceScatterOp>(op) || !op->getResult(0).hasOneUse())
    return {};
  auto reduce = dyn_cast<AllReduceOp>(*op->getResult(0).getUsers().begin());
  return reduce && reduce.getGroup() == kReplicaGroup ? reduce : AllReduceOp();
}

/// The op whose result is `op`'s reduced gradient: its all-reduce across
/// the replicas, or itself.
Operation *finalReductionOf(Operation *op) {
  if (AllReduceOp reduce = acrossReplicasOf(op))
    return reduce;
  return op;
}

/// The first op in the block that uses the reduced gradient of any of
/// `ops`, or null.
Operation *firstUserOf(ArrayRef<Operation *> ops) {
  Operation *first = nullptr;
  for (Operation *op : ops)
    for (Operation *user : finalReductionOf(op)->getResult(0).getUsers())
      if (!first || user->isBeforeInBlock(first))
        first = user;
  return first;
}

/// Replaces the reduced gradient of each of `members` by the matching
/// result of `unpack`, and erases the members (and their all-reduces
/// across replicas).
void replaceMembers(ArrayRef<Operation *> members, UnpackOp unpack) {
  for (auto [member, result] : llvm::zip(members, unpack.getResults())) {
    Operation *last = finalReductionOf(member);
    last->getResult(0).replaceAllUsesWith(result);
    if (last != member)
      last->erase();
    member->erase();
  }
}

struct BucketCollectivesPass
    : zero::impl::BucketCollectivesBase<BucketCollectivesPass> {
  using BucketCollectivesBase::BucketCollectivesBase;

  void runOnOperation() override {
    if (bucketBytes < 0) {
      getOperation().emitError()
          << getArgument() << ": bucket-bytes must not be negative, got "
          << static_cast<int64_t>(bucketBytes);
      return signalPassFailure();
    }
    for (StringRef name : {kTrainStepFuncName, kTrainApplyFuncName}) {
      auto func = getOperation().lookupSymbol<func::FuncOp>(name);
      if (!func)
        continue;
      if (gatherUnits)
        bucketUnitGathers(func);
      if (bucketBytes > 0)
        bucketReductions(func);
    }
  }

  /// One all-gather per unit and phase: the k-th gathers of the unit's
  /// parameters (k = 0 forward, 1 backward) move together, where the first
  /// of them was.
  void bucketUnitGathers(func::FuncOp func) {
    using Key = std::tuple<StringRef, unsigned, Type>;
    llvm::MapVector<Key, SmallVector<Operation *>> groups;
    DenseMap<Value, unsigned> gathersSoFar;
    for (Operation &op : func.getBody().front()) {
      auto gather = dyn_cast<AllGatherOp>(op);
      if (!gather)
        continue;
      auto arg = dyn_cast<BlockArgument>(gather.getInput());
      StringRef name = arg ? getParamName(func, arg.getArgNumber()) : "";
      if (name.empty())
        continue;
      Key key{getParamUnit(name), gathersSoFar[arg]++,
              gather.getInput().getType().getElementType()};
      groups[key].push_back(gather);
    }
    for (auto &[key, members] : groups) {
      if (members.size() < 2)
        continue;
      auto first = cast<AllGatherOp>(members.front());
      OpBuilder b(first);
      Location loc = first.getLoc();
      int64_t worldSize = first.getWorldSize();
      SmallVector<Value> shards;
      SmallVector<Type> wholeTypes;
      SmallVector<Location> labels;
      for (Operation *member : members) {
        shards.push_back(member->getOperand(0));
        wholeTypes.push_back(member->getResult(0).getType());
        labels.push_back(member->getLoc());
      }
      auto pack = PackOp::create(b, loc, packedType(shards, 1), shards,
                                 b.getI64IntegerAttr(1));
      auto gatheredType =
          RankedTensorType::get({worldSize * pack.getType().getNumElements()},
                                pack.getType().getElementType());
      auto gather =
          AllGatherOp::create(b, withCollectiveLabel(loc, bucketLabel(labels)),
                              gatheredType, pack, first.getGroupAttr());
      auto unpack = UnpackOp::create(b, loc, wholeTypes, gather,
                                     b.getI64IntegerAttr(worldSize));
      replaceMembers(members, unpack);
    }
  }

  /// Is `op` the reduction of a gradient (not of the loss or of a norm)?
  static bool isGradientReduction(Operation *op) {
    if (!isa<ReduceScatterOp, AllReduceOp>(op))
      return false;
    Value input = op->getOperand(0);
    if (Operation *scatter = input.getDefiningOp();
        scatter && acrossReplicasOf(scatter) == op)
      return false; // It goes with its reduce-scatter.
    return !isa<BlockArgument>(input) &&
           cast<RankedTensorType>(input.getType()).getRank() > 0;
  }

  /// Gradient reductions in production order, in buckets of at most
  /// bucket-bytes. A bucket closes early where the next reduction is of
  /// another kind or type, or would come after a use of a reduced gradient
  /// already in the bucket (which must then be unpacked before it).
  void bucketReductions(func::FuncOp func) {
    SmallVector<Operation *> bucket;
    int64_t bytes = 0;
    auto fits = [&](Operation *op) {
      if (bucket.empty())
        return true;
      Operation *head = bucket.front();
      if (head->getName() != op->getName() ||
          cast<CollectiveOpInterface>(head).getGroupName() !=
              cast<CollectiveOpInterface>(op).getGroupName() ||
          bool(acrossReplicasOf(head)) != bool(acrossReplicasOf(op)) ||
          getElementTypeOrSelf(head->getOperand(0).getType()) !=
              getElementTypeOrSelf(op->getOperand(0).getType()) ||
          bytes + getByteSize(op->getOperand(0).getType()) > bucketBytes)
        return false;
      Operation *user = firstUserOf(bucket);
      return !user || op->isBeforeInBlock(user);
    };
    SmallVector<Operation *> reductions;
    for (Operation &op : func.getBody().front())
      if (isGradientReduction(&op))
        reductions.push_back(&op);
    for (Operation *op : reductions) {
      if (!fits(op)) {
        flushReductionBucket(bucket);
        bucket.clear();
        bytes = 0;
      }
      bucket.push_back(op);
      bytes += getByteSize(op->getOperand(0).getType());
    }
    flushReductionBucket(bucket);
  }

  /// Replaces the reductions of `bucket` (two or more) by one, at the last
  /// of them; the reduced gradients are unpacked before their first use.
  void flushReductionBucket(ArrayRef<Operation *> bucket) {
    if (bucket.size() < 2)
      return;
    Operation *last = bucket.back();
    OpBuilder b(last);
    Location loc = last->getLoc();
    auto collective = cast<CollectiveOpInterface>(last);
    auto group =
        FlatSymbolRefAttr::get(last->getContext(), collective.getGroupName());
    bool scatter = isa<ReduceScatterOp>(last);
    // A reduce-scatter hands rank r chunk r of its input: lay the bucket out
    // so that chunk r holds rank r's shard of every gradient.
    int64_t chunks = scatter ? collective.getNumRanks() : 1;
    SmallVector<Value> grads;
    SmallVector<Type> reducedTypes;
    SmallVector<Location> labels;
    for (Operation *op : bucket) {
      grads.push_back(op->getOperand(0));
      reducedTypes.push_back(op->getResult(0).getType());
      labels.push_back(op->getLoc());
    }
    Location bucketLoc = withCollectiveLabel(loc, bucketLabel(labels));
    auto pack = PackOp::create(b, loc, packedType(grads, chunks), grads,
                               b.getI64IntegerAttr(chunks));
    Value reduced;
    if (scatter) {
      auto shardType =
          RankedTensorType::get({pack.getType().getNumElements() / chunks},
                                pack.getType().getElementType());
      reduced = ReduceScatterOp::create(b, bucketLoc, shardType, pack, group);
      if (AllReduceOp acrossReplicas = acrossReplicasOf(last))
        reduced = AllReduceOp::create(b, bucketLoc, shardType, reduced,
                                      acrossReplicas.getGroupAttr());
    } else {
      reduced = AllReduceOp::create(b, bucketLoc, pack.getType(), pack, group);
    }
    Operation *user = firstUserOf(bucket);
    if (user)
      b.setInsertionPoint(user);
    else
      b.setInsertionPoint(last->getBlock()->getTerminator());
    auto unpack =
        UnpackOp::create(b, loc, reducedTypes, reduced, b.getI64IntegerAttr(1));
    replaceMembers(bucket, unpack);
  }
};

} // namespace
