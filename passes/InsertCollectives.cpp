//===- InsertCollectives.cpp - realise the ZeRO placement -----------------===//
//
// Turns the placements chosen by zero-placement into data movement. The
// traffic per rank and step is exactly the ZeRO paper's: 2 Psi elements at
// stages 0-2 (all-reduce, or reduce-scatter + all-gather) and 3 Psi at
// stage 3 (gather for forward, gather for backward, reduce-scatter).
//
//===----------------------------------------------------------------------===//
#include "passes/PassUtils.h"
#include "passes/Passes.h"

namespace zero {
#define GEN_PASS_DEF_INSERTCOLLECTIVES
#include "passes/Passes.h.inc"
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

namespace {
struct InsertCollectivesPass
    : zero::impl::InsertCollectivesBase<InsertCollectivesPass> {
  int64_t worldSize = 1;
  Operation *lossOp = nullptr;

  void runOnOperation() override {
    func::FuncOp func = lookupFunction(getOperation(), kTrainStepFuncName,
                                       getArgument(), "run zero-placement first");
    if (!func || failed(readPlacement(func)))
      return signalPassFailure();
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
    auto worldSizeAttr = func->getAttrOfType<IntegerAttr>(kWorldSizeAttrName);
    if (!worldSizeAttr)
      return func.emitError() << getArgument() << ": @train_step has no "
                              << kWorldSizeAttrName
                              << " (run zero-placement first)";
    worldSize = worldSizeAttr.getInt();
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (!func.getArgAttrOfType<PlacementAttr>(i, kPlacementAttrName))
        return func.emitError() << getArgument() << ": argument #" << i
                                << " of @train_step has no placement";
    Value loss = func.getBody().front().getTerminator()->getOperand(0);
    lossOp = loss.getDefiningOp();
    if (!lossOp)
      return func.emitError() << getArgument()
                              << ": the loss must be computed in @train_step";
    return success();
  }

  RankedTensorType shardTypeOf(Type full) {
    return RankedTensorType::get({shardSize(getNumElements(full), worldSize)},
                                 Float32Type::get(&getContext()));
  }

  /// Reduces the gradient of one AdamW update and moves its operands between
  /// whole tensors and shards as the placement of its state requires.
  LogicalResult rewriteUpdate(nn::AdamWOp update) {
    for (Value state : {update.getParam(), update.getExpAvg(),
                        update.getExpAvgSq()})
      if (!isa<BlockArgument>(state))
        return update.emitOpError()
               << "must update arguments of @train_step in place ("
               << getArgument() << ")";
    OpBuilder b(update);
    Location loc = update.getLoc();
    StringRef dp = kDataParallelGroup;
    Type fullType = update.getParam().getType();

    if (!isShardedArg(update.getExpAvg())) { // Stage 0: plain data parallel.
      Value grad = AllReduceOp::create(b, loc, update.getGrad(), dp, worldSize);
      update.getGradMutable().assign(grad);
      ++numAllReduces;
      return success();
    }

    RankedTensorType shardType = shardTypeOf(fullType);
    bool paramSharded = isShardedArg(update.getParam());
    if (paramSharded)
      gatherAroundUses(cast<BlockArgument>(update.getParam()), shardType);
    Value gradShard = ReduceScatterOp::create(b, loc, shardType,
                                              update.getGrad(), dp, worldSize);
    ++numReduceScatters;
    Value paramShard =
        paramSharded ? update.getParam()
                     : LocalShardOp::create(b, loc, shardType,
                                            update.getParam(), dp, worldSize)
                           .getResult();
    shardArgument(update.getExpAvg(), shardType);
    shardArgument(update.getExpAvgSq(), shardType);
    auto shardUpdate = nn::AdamWOp::create(
        b, loc, shardType, shardType, shardType, paramShard, gradShard,
        update.getExpAvg(), update.getExpAvgSq(), update.getLr(),
        update.getStep(), update.getBeta1Attr(), update.getBeta2Attr(),
        update.getEpsAttr(), update.getWeightDecayAttr());
    Value newParam = shardUpdate.getNewParam();
    if (!paramSharded) { // Stages 1, 2: every rank needs the whole update.
      newParam = AllGatherOp::create(b, loc, fullType, newParam, dp, worldSize);
      ++numAllGathers;
    }
    update.getNewParam().replaceAllUsesWith(newParam);
    update.getNewExpAvg().replaceAllUsesWith(shardUpdate.getNewExpAvg());
    update.getNewExpAvgSq().replaceAllUsesWith(shardUpdate.getNewExpAvgSq());
    update.erase();
    return success();
  }

  /// Gives a sharded argument its shard type; the whole tensor's type stays
  /// on record for the runtime, which initialises the whole tensor's shard.
  static void shardArgument(Value value, RankedTensorType shardType) {
    auto arg = cast<BlockArgument>(value);
    auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    func.setArgAttr(arg.getArgNumber(), kUnshardedTypeAttrName,
                    TypeAttr::get(arg.getType()));
    arg.setType(shardType);
  }

  /// Stage 3: `param` becomes a shard; each phase (forward, backward) that
  /// uses it gets its own gathered copy, released after the phase's last use.
  void gatherAroundUses(BlockArgument param, RankedTensorType shardType) {
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
    shardArgument(param, shardType);
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
    Value full = AllGatherOp::create(b, param.getLoc(), fullType, param,
                                     kDataParallelGroup, worldSize);
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
    terminator->setOperand(0, AllReduceOp::create(b, loss.getLoc(), loss,
                                                  kDataParallelGroup,
                                                  worldSize));
    ++numAllReduces;
  }
};
} // namespace
