//===- InsertCollectives.cpp - realise the ZeRO placement -----------------===//
//
// Turns the placements chosen by zero-placement into data movement. The
// traffic per rank and step is exactly the ZeRO paper's: 2 Psi elements at
// stages 0-2 (all-reduce, or reduce-scatter + all-gather) and 3 Psi at
// stage 3 (gather for forward, gather for backward, reduce-scatter).
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

namespace zero {
#define GEN_PASS_DEF_INSERTCOLLECTIVES
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

static bool isShardedArg(Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return false;
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto placement = func.getArgAttrOfType<PlacementAttr>(arg.getArgNumber(),
                                                        kPlacementAttrName);
  return placement && placement.isSharded();
}

/// The whole tensor's type of an argument, sharded or not.
static RankedTensorType fullTypeOf(BlockArgument arg) {
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (auto full = func.getArgAttrOfType<TypeAttr>(arg.getArgNumber(),
                                                  kUnshardedTypeAttrName))
    return cast<RankedTensorType>(full.getValue());
  return cast<RankedTensorType>(arg.getType());
}

/// The argument whose buffer `value` is written back into at the end of the
/// step (through `zero.updates`), or null.
static BlockArgument destinationOf(Value value) {
  for (OpOperand &use : value.getUses()) {
    auto ret = dyn_cast<func::ReturnOp>(use.getOwner());
    if (!ret)
      continue;
    auto func = cast<func::FuncOp>(ret->getParentOp());
    if (auto updates = func.getResultAttrOfType<IntegerAttr>(
            use.getOperandNumber(), kUpdatesAttrName))
      return func.getArgument(updates.getInt());
  }
  return nullptr;
}

/// The name of the parameter argument `arg` stands for (its `attrName`:
/// nn.param, else nn.master), for labelling the collectives that move it;
/// empty when `arg` is null or unnamed.
static StringRef nameOf(Value value, StringRef attrName = nn::kParamAttrName) {
  auto arg = dyn_cast_or_null<BlockArgument>(value);
  if (!arg)
    return {};
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  StringRef name = getArgString(func, arg.getArgNumber(), attrName);
  if (name.empty())
    name = getArgString(func, arg.getArgNumber(), kMasterAttrName);
  return name;
}

static bool isParamArg(BlockArgument arg) {
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto placement = func.getArgAttrOfType<PlacementAttr>(arg.getArgNumber(),
                                                        kPlacementAttrName);
  return placement && placement.getRole() == Role::Param;
}

namespace {
struct InsertCollectivesPass
    : zero::impl::InsertCollectivesBase<InsertCollectivesPass> {
  /// The group sharded state is sharded over (@dp, or @shard with hybrid
  /// sharding) and its size; whether gradient shards are then all-reduced
  /// over @replica.
  StringRef shardGroup = kDataParallelGroup;
  int64_t worldSize = 1;
  bool hybrid = false;
  int64_t stage = 0;
  Operation *lossOp = nullptr;

  void runOnOperation() override {
    func::FuncOp func =
        lookupFunction(getOperation(), kTrainStepFuncName, getArgument(),
                       "run zero-placement first");
    if (!func || failed(readPlacement(func)))
      return signalPassFailure();
    // Stage 3: parameters become shards, gathered around their uses.
    for (BlockArgument arg : func.getArguments())
      if (isParamArg(arg) && isShardedArg(arg))
        gatherAroundUses(arg);
    SmallVector<nn::AdamWOp> updates;
    func.walk([&](nn::AdamWOp op) { updates.push_back(op); });
    for (nn::AdamWOp update : updates)
      if (failed(rewriteUpdate(update)))
        return signalPassFailure();
    reduceLoss(func);
    Block &entry = func.getBody().front();
    func.setType(FunctionType::get(&getContext(), entry.getArgumentTypes(),
                                   entry.getTerminator()->getOperandTypes()));
  }

  LogicalResult readPlacement(func::FuncOp func) {
    GroupOp group = getDataParallelGroup(getOperation());
    if (!group || !group.getStage())
      return func.emitError() << getArgument() << ": the module has no "
                              << "zero.group @" << kDataParallelGroup
                              << " with a stage (run zero-placement first)";
    stage = *group.getStage();
    GroupOp sharding = getShardingGroup(getOperation());
    shardGroup = sharding.getSymName();
    worldSize = sharding.getWorldSize();
    hybrid = sharding != group;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (!func.getArgAttrOfType<PlacementAttr>(i, kPlacementAttrName))
        return func.emitError() << getArgument() << ": argument #" << i
                                << " of @train_step has no placement";
    Value loss = func.getBody().front().getTerminator()->getOperand(0);
    lossOp = loss.getDefiningOp();
    if (!lossOp)
      return func.emitError()
             << getArgument() << ": the loss must be computed in @train_step";
    return success();
  }

  RankedTensorType shardTypeOf(RankedTensorType full) {
    return RankedTensorType::get({shardSize(full.getNumElements(), worldSize)},
                                 full.getElementType());
  }

  /// Gives a sharded argument its shard type; the whole tensor's type stays
  /// on record for the runtime, which initialises the whole tensor's shard.
  void shardArgument(BlockArgument arg) {
    if (arg.getType() != fullTypeOf(arg))
      return; // Already a shard.
    auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    func.setArgAttr(arg.getArgNumber(), kUnshardedTypeAttrName,
                    TypeAttr::get(arg.getType()));
    arg.setType(shardTypeOf(fullTypeOf(arg)));
  }

  /// A whole tensor of `fullType` from `shard` for the argument `dest`: the
  /// shard itself when `dest` is sharded, else the all-gathered tensor.
  Value deliver(OpBuilder &b, Location loc, Value shard,
                RankedTensorType fullType, BlockArgument dest) {
    if (dest && isShardedArg(dest))
      return shard;
    ++numAllGathers;
    return AllGatherOp::create(b, withCollectiveLabel(loc, nameOf(dest)),
                               fullType, shard, shardGroup);
  }

  /// Reduces the gradient of one AdamW update and moves its operands between
  /// whole tensors and shards as the placement of its state requires.
  LogicalResult rewriteUpdate(nn::AdamWOp update) {
    for (Value state :
         {update.getParam(), update.getExpAvg(), update.getExpAvgSq()})
      if (!isa<BlockArgument>(state))
        return update.emitOpError()
               << "must update arguments of @train_step in place ("
               << getArgument() << ")";
    OpBuilder b(update);
    Location loc = update.getLoc();
    // The collectives of this update are labelled with the parameter's name
    // (the moments are named after it at every precision and stage).
    Location reduceLoc = withCollectiveLabel(
        loc, nameOf(cast<BlockArgument>(update.getExpAvg()), kAdamMAttrName));
    StringRef dp = kDataParallelGroup;
    // Where the gradient is reduced decides how long the whole gradient
    // lives: as soon as it is produced at stages 0 (DDP: it is the reduced
    // gradient that lives on) and 2-3 (only the shard lives on); just before
    // the update at stage 1, which partitions only the optimizer state and
    // keeps whole gradients, as ZeRO-1 does.
    OpBuilder reduceAt(update);
    if (stage != 1)
      reduceAt.setInsertionPointAfterValue(update.getGrad());

    if (!isShardedArg(update.getExpAvg())) { // Stage 0: plain data parallel.
      Value grad =
          AllReduceOp::create(reduceAt, reduceLoc, update.getGrad(), dp);
      update.getGradMutable().assign(grad);
      ++numAllReduces;
      return success();
    }

    // Stages 1-3: AdamW runs on this rank's shard of the float32 state (the
    // parameter, or the master copy of a bfloat16 parameter).
    auto state = cast<BlockArgument>(update.getParam());
    RankedTensorType fullType = fullTypeOf(state);
    RankedTensorType shardType = shardTypeOf(fullType);
    auto gradType = cast<RankedTensorType>(update.getGrad().getType());
    Value gradShard =
        ReduceScatterOp::create(reduceAt, reduceLoc, shardTypeOf(gradType),
                                update.getGrad(), shardGroup);
    ++numReduceScatters;
    // Hybrid sharding: each shard group summed its ranks' gradients; the
    // groups' sums are added across the replicas of the shard.
    if (hybrid) {
      gradShard =
          AllReduceOp::create(reduceAt, reduceLoc, gradShard, kReplicaGroup);
      ++numAllReduces;
    }
    Value stateShard = state;
    if (isShardedArg(state))
      shardArgument(state);
    else
      stateShard = LocalShardOp::create(b, loc, shardType, state, shardGroup);
    shardArgument(cast<BlockArgument>(update.getExpAvg()));
    shardArgument(cast<BlockArgument>(update.getExpAvgSq()));
    auto shardUpdate = nn::AdamWOp::create(
        b, loc, shardType, shardType, shardType, stateShard, gradShard,
        update.getExpAvg(), update.getExpAvgSq(), update.getLr(),
        update.getStep(), update.getBeta1(), update.getBeta2(), update.getEps(),
        update.getWeightDecay(), update.getGradScale());

    // The new state goes back to its argument; a bfloat16 parameter is cast
    // from the new master shard, then gathered unless it is sharded too.
    Value newShard = shardUpdate.getNewParam();
    for (OpOperand &use :
         llvm::make_early_inc_range(update.getNewParam().getUses())) {
      auto castOp = dyn_cast<nn::CastOp>(use.getOwner());
      if (!castOp) {
        use.set(deliver(b, loc, newShard, fullType, state));
        continue;
      }
      auto paramType = castOp.getType();
      Value castShard = nn::CastOp::create(
          b, castOp.getLoc(), shardType.clone(paramType.getElementType()),
          newShard);
      castOp.replaceAllUsesWith(deliver(b, castOp.getLoc(), castShard,
                                        paramType,
                                        destinationOf(castOp.getResult())));
      castOp.erase();
    }
    update.getNewExpAvg().replaceAllUsesWith(shardUpdate.getNewExpAvg());
    update.getNewExpAvgSq().replaceAllUsesWith(shardUpdate.getNewExpAvgSq());
    update.erase();
    return success();
  }

  /// Stage 3: `param` becomes a shard; each phase (forward, backward) that
  /// uses it gets its own gathered copy, released after the phase's last use.
  void gatherAroundUses(BlockArgument param) {
    Type fullType = param.getType();
    SmallVector<Operation *> forwardUsers, backwardUsers;
    for (Operation *user : param.getUsers()) {
      if (isa<nn::AdamWOp>(user))
        continue;
      bool forward = user == lossOp || user->isBeforeInBlock(lossOp);
      auto &users = forward ? forwardUsers : backwardUsers;
      if (!llvm::is_contained(users, user))
        users.push_back(user);
    }
    shardArgument(param);
    for (ArrayRef<Operation *> users : {forwardUsers, backwardUsers})
      if (!users.empty())
        gatherForPhase(param, fullType, users);
  }

  void gatherForPhase(Value param, Type fullType, ArrayRef<Operation *> users) {
    auto byPosition = [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    };
    Operation *first = *llvm::min_element(users, byPosition);
    Operation *last = *llvm::max_element(users, byPosition);
    OpBuilder b(first);
    Value full = AllGatherOp::create(
        b, withCollectiveLabel(param.getLoc(), nameOf(param)), fullType, param,
        shardGroup);
    ++numAllGathers;
    param.replaceUsesWithIf(full, [&](OpOperand &use) {
      return llvm::is_contained(users, use.getOwner());
    });
    b.setInsertionPointAfter(last);
    ReleaseOp::create(b, param.getLoc(), full);
  }

  /// Every rank returns the global mean: the sum of the ranks' losses, each
  /// already divided by the global batch.
  void reduceLoss(func::FuncOp func) {
    Operation *terminator = func.getBody().front().getTerminator();
    OpBuilder b(terminator);
    Value loss = terminator->getOperand(0);
    terminator->setOperand(
        0, AllReduceOp::create(b, withCollectiveLabel(loss.getLoc(), "loss"),
                               loss, kDataParallelGroup));
    ++numAllReduces;
  }
};
} // namespace
