//===- ScheduleOverlap.cpp - start collectives early, wait late -----------===//
//
// The runtime runs collectives on a communication thread (stream) in the
// order they start, so a collective started early overlaps every kernel
// issued before its wait. This pass decides those two points per collective.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

namespace zero {
#define GEN_PASS_DEF_SCHEDULEOVERLAP
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {
/// An asynchronous collective after the split.
struct Transfer {
  Operation *start;
  WaitOp wait;
  bool isGather;  // All-gather of a parameter shard argument: prefetched.
  bool isBounded; // Reductions of gradients and gathers of updated shards:
                  // what they read stays alive until their wait.
  int64_t bytes;
};

struct ScheduleOverlapPass
    : zero::impl::ScheduleOverlapBase<ScheduleOverlapPass> {
  using ScheduleOverlapBase::ScheduleOverlapBase;

  void runOnOperation() override {
    if (prefetch < 0 || maxLiveGatherBytes < 0 || maxInflightReductions < 1) {
      getOperation().emitError()
          << getArgument()
          << ": prefetch and max-live-gather-bytes must not be negative and "
             "max-inflight-reductions must be at least 1";
      return signalPassFailure();
    }
    for (StringRef name : {kTrainStepFuncName, kTrainApplyFuncName})
      if (auto func = getOperation().lookupSymbol<func::FuncOp>(name))
        schedule(func);
  }

  void schedule(func::FuncOp func) {
    SmallVector<Transfer> transfers = splitCollectives(func);
    for (Transfer &t : transfers)
      sinkWait(t);
    boundReductions(transfers);
    prefetchGathers(transfers);
  }

  /// Replaces each blocking collective by a start and a wait in its place.
  SmallVector<Transfer> splitCollectives(func::FuncOp func) {
    SmallVector<Operation *> collectives;
    func.walk([&](Operation *op) {
      if (isa<AllGatherOp, ReduceScatterOp, AllReduceOp>(op))
        collectives.push_back(op);
    });
    SmallVector<Transfer> transfers;
    for (Operation *op : collectives) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value input = op->getOperand(0);
      auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
      auto futureType = FutureType::get(&getContext(), resultType);
      auto group = op->getAttrOfType<FlatSymbolRefAttr>("group");
      Operation *start;
      if (isa<AllGatherOp>(op))
        start = AllGatherStartOp::create(b, loc, futureType, input, group);
      else if (isa<ReduceScatterOp>(op))
        start = ReduceScatterStartOp::create(b, loc, futureType, input, group);
      else
        start = AllReduceStartOp::create(b, loc, futureType, input, group);
      auto wait = WaitOp::create(b, loc, resultType, start->getResult(0));
      op->getResult(0).replaceAllUsesWith(wait.getResult());
      op->erase();
      // Gathers of arguments are stage-3 parameters, worth prefetching;
      // other gathers (of updated shards) and reductions of more than a
      // scalar (gradients) are bounded.
      bool isGather = isa<AllGatherStartOp>(start) &&
                      (isa<BlockArgument>(input) || packOfArguments(input));
      bool isBounded = !isGather && resultType.getRank() > 0;
      transfers.push_back(
          {start, wait, isGather, isBounded, getByteSize(resultType)});
    }
    return transfers;
  }

  /// The zero.pack of parameter shards (a unit's bucket) that `value` is,
  /// or null: it may move wherever its gather goes.
  static PackOp packOfArguments(Value value) {
    auto pack = value.getDefiningOp<PackOp>();
    if (!pack || !llvm::all_of(pack.getInputs(), [](Value input) {
          return isa<BlockArgument>(input);
        }))
      return nullptr;
    return pack;
  }

  /// The wait moves down to just before the first use of its result.
  static void sinkWait(Transfer &t) {
    Operation *first = nullptr;
    for (Operation *user : t.wait->getUsers())
      if (!first || user->isBeforeInBlock(first))
        first = user;
    if (first)
      t.wait->moveBefore(first);
  }

  /// A reduction reads its whole gradient, and the gather of an updated
  /// shard its shard, until the wait: at most max-inflight-reductions of
  /// them are in flight when the next one starts.
  void boundReductions(ArrayRef<Transfer> transfers) {
    SmallVector<const Transfer *> reductions;
    for (const Transfer &t : transfers)
      if (t.isBounded)
        reductions.push_back(&t);
    for (size_t i = 0; i + maxInflightReductions < reductions.size(); ++i) {
      Operation *laterStart = reductions[i + maxInflightReductions]->start;
      if (laterStart->isBeforeInBlock(reductions[i]->wait))
        reductions[i]->wait->moveBefore(laterStart);
    }
  }

  /// Gather i starts just before gather i - k is waited for (that is, as
  /// the computation using gather i - k begins), for the largest
  /// k <= prefetch whose gathered copies fit under the cap, and never above
  /// its input's producer. Starts keep their order: start i - 1 already sits
  /// before wait i - k - 1.
  void prefetchGathers(ArrayRef<Transfer> transfers) {
    SmallVector<const Transfer *> gathers;
    for (const Transfer &t : transfers)
      if (t.isGather)
        gathers.push_back(&t);
    for (size_t i = 1; i < gathers.size(); ++i) {
      for (int64_t k = std::min<int64_t>(prefetch, i); k >= 1; --k) {
        int64_t live = 0;
        for (size_t j = i - k; j <= i; ++j)
          live += gathers[j]->bytes;
        if (maxLiveGatherBytes && live > maxLiveGatherBytes)
          continue;
        Operation *start = gathers[i]->start;
        Operation *anchor = gathers[i - k]->wait;
        // A unit's bucket of shards is packed right before its gather,
        // wherever that goes; any other input stays above its gather.
        PackOp pack = packOfArguments(start->getOperand(0));
        Operation *producer =
            pack ? nullptr : start->getOperand(0).getDefiningOp();
        if (producer && anchor->isBeforeInBlock(producer))
          start->moveAfter(producer);
        else if (anchor->isBeforeInBlock(start))
          start->moveBefore(anchor);
        if (pack)
          pack->moveBefore(start);
        break;
      }
    }
  }
};
} // namespace
