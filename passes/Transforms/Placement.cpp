//===- Placement.cpp - choose what each ZeRO stage shards -----------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

namespace zero {
#define GEN_PASS_DEF_PLACEMENT
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

/// The role of argument `index` of @train_step, from its nn attributes.
static Role classifyArgument(func::FuncOp func, unsigned index) {
  if (!getParamName(func, index).empty())
    return Role::Param;
  if (!getArgString(func, index, kAdamMAttrName).empty() ||
      !getArgString(func, index, kAdamVAttrName).empty())
    return Role::Moment;
  if (!getArgString(func, index, kMasterAttrName).empty())
    return Role::Master;
  if (!getArgString(func, index, kHyperAttrName).empty())
    return Role::Hyper;
  return Role::Data;
}

/// The ZeRO paper's partitioning: P_os (stage 1), P_os+g (2), P_os+g+p (3).
static Distribution distributionFor(Role role, int64_t stage) {
  switch (role) {
  case Role::Data:
    return Distribution::Sharded; // Split by rows, at every stage.
  case Role::Moment:
  case Role::Master:
    return stage >= 1 ? Distribution::Sharded : Distribution::Replicated;
  case Role::Grad:
    return stage >= 2 ? Distribution::Sharded : Distribution::Replicated;
  case Role::Param:
    return stage >= 3 ? Distribution::Sharded : Distribution::Replicated;
  case Role::Hyper:
    return Distribution::Replicated;
  }
  llvm_unreachable("unknown role");
}

namespace {
struct PlacementPass : zero::impl::PlacementBase<PlacementPass> {
  using PlacementBase::PlacementBase;

  void runOnOperation() override {
    func::FuncOp func =
        lookupFunction(getOperation(), kTrainStepFuncName, getArgument(),
                       "run nn-autodiff and zero-adamw first");
    if (!func)
      return signalPassFailure();
    GroupOp group = getDataParallelGroup(getOperation());
    if (!group) {
      func.emitError() << getArgument() << ": the module has no zero.group @"
                       << kDataParallelGroup
                       << " to shard over; run zero-split-batch first";
      return signalPassFailure();
    }
    if (stage < 0 || stage > 3) {
      func.emitError() << getArgument() << ": stage must be 0, 1, 2 or 3, got "
                       << stage.getValue();
      return signalPassFailure();
    }
    FailureOr<FlatSymbolRefAttr> shardGroup = declareMesh(group);
    if (failed(shardGroup))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    // Data is split over every rank; the training state over the shard
    // group, when there is one.
    auto placementOf = [&](Role role) {
      Distribution distribution = distributionFor(role, stage);
      bool inGroups = *shardGroup && role != Role::Data &&
                      distribution == Distribution::Sharded;
      return PlacementAttr::get(ctx, role, distribution,
                                inGroups ? *shardGroup : FlatSymbolRefAttr());
    };
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      func.setArgAttr(i, kPlacementAttrName,
                      placementOf(classifyArgument(func, i)));
    group.setStage(stage.getValue());
    func->setAttr(kGradPlacementAttrName, placementOf(Role::Grad));
  }

  /// With shard-group-size, declares @shard and @replica after `dp` and
  /// returns @shard; null without hybrid sharding.
  FailureOr<FlatSymbolRefAttr> declareMesh(GroupOp dp) {
    int64_t size = shardGroupSize, world = dp.getWorldSize();
    if (size == 0 || size == world)
      return FlatSymbolRefAttr();
    if (size < 2 || world % size != 0) {
      dp.emitError() << getArgument() << ": shard-group-size " << size
                     << " must be at least 2 and divide the world size "
                     << world;
      return failure();
    }
    if (stage == 0) {
      dp.emitError() << getArgument()
                     << ": stage 0 shards nothing, so it has no shard groups";
      return failure();
    }
    if (GroupOp existing = getShardingGroup(getOperation()); existing != dp) {
      existing.emitError() << getArgument()
                           << ": the module already has a zero.group @"
                           << kShardGroup;
      return failure();
    }
    OpBuilder b(dp);
    b.setInsertionPointAfter(dp);
    auto parent = FlatSymbolRefAttr::get(dp.getSymNameAttr());
    MLIRContext *ctx = &getContext();
    auto shard = GroupOp::create(
        b, dp.getLoc(), kShardGroup, size,
        /*stage=*/nullptr, MeshAxisAttr::get(ctx, MeshAxis::Shard), parent);
    GroupOp::create(b, dp.getLoc(), kReplicaGroup, world / size,
                    /*stage=*/nullptr,
                    MeshAxisAttr::get(ctx, MeshAxis::Replica), parent);
    return FlatSymbolRefAttr::get(shard.getSymNameAttr());
  }
};
} // namespace
