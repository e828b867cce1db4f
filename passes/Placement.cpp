//===- Placement.cpp - choose what each ZeRO stage shards -----------------===//
#include "passes/PassUtils.h"
#include "passes/Passes.h"

namespace zero {
#define GEN_PASS_DEF_PLACEMENT
#include "passes/Passes.h.inc"
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
    func::FuncOp func = lookupFunction(getOperation(), kTrainStepFuncName,
                                       getArgument(),
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
    MLIRContext *ctx = &getContext();
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      Role role = classifyArgument(func, i);
      func.setArgAttr(i, kPlacementAttrName,
                      PlacementAttr::get(ctx, role, distributionFor(role, stage)));
    }
    group.setStage(stage.getValue());
    func->setAttr(kGradPlacementAttrName,
                  PlacementAttr::get(ctx, Role::Grad,
                                     distributionFor(Role::Grad, stage)));
  }
};
} // namespace
