//===- KeepGathered.cpp - no reshard after forward, per unit --------------===//
//
// Stage 3 gathers a parameter for the forward, frees it, and gathers it
// again for the backward: 3 x Psi of traffic for the least memory. Keeping a
// unit's forward copy until its backward trades that unit's second gather
// for holding it whole in between. The decision is per unit, so a user can
// keep the last blocks (whose backward comes first) and reshard the rest.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace zero {
#define GEN_PASS_DEF_KEEPGATHERED
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {

/// The forward gather of a parameter, the release that ends it, and the
/// backward gather that would replace it.
struct Regather {
  AllGatherOp forward;
  ReleaseOp forwardRelease;
  AllGatherOp backward;
};

/// The first release of `gathered` in its block, or null.
ReleaseOp firstRelease(Value gathered) {
  ReleaseOp first;
  for (Operation *user : gathered.getUsers())
    if (auto release = dyn_cast<ReleaseOp>(user))
      if (!first || release->isBeforeInBlock(first))
        first = release;
  return first;
}

struct KeepGatheredPass : zero::impl::KeepGatheredBase<KeepGatheredPass> {
  using KeepGatheredBase::KeepGatheredBase;

  void runOnOperation() override {
    func::FuncOp trainStep =
        lookupFunction(getOperation(), kTrainStepFuncName, getArgument(),
                       "run zero-insert-collectives first");
    if (!trainStep)
      return signalPassFailure();

    // Parameters gathered twice (forward, backward), by unit, in order.
    llvm::MapVector<StringRef, SmallVector<Regather>> byUnit;
    for (BlockArgument arg : trainStep.getArguments()) {
      StringRef name = getParamName(trainStep, arg.getArgNumber());
      SmallVector<AllGatherOp> gathers;
      for (Operation *user : arg.getUsers())
        if (auto gather = dyn_cast<AllGatherOp>(user))
          gathers.push_back(gather);
      if (name.empty() || gathers.size() < 2)
        continue;
      llvm::sort(gathers, [](AllGatherOp a, AllGatherOp b) {
        return a->isBeforeInBlock(b);
      });
      ReleaseOp release = firstRelease(gathers[0].getResult());
      // Without a release before the second gather nothing is freed in
      // between, and there is nothing to keep.
      if (!release || !release->isBeforeInBlock(gathers[1]))
        continue;
      byUnit[getParamUnit(name)].push_back({gathers[0], release, gathers[1]});
    }

    llvm::StringSet<> chosen;
    for (const std::string &unit : units) {
      if (!byUnit.count(unit)) {
        InFlightDiagnostic diag = emitError(trainStep.getLoc())
                                  << getArgument() << ": unit '" << unit
                                  << "' has no parameter gathered for both "
                                     "forward and backward";
        if (byUnit.empty())
          diag << " (this program regathers nothing: only stage 3 does)";
        else
          diag << "; units that have: "
               << llvm::join(llvm::make_first_range(byUnit), ", ");
        return signalPassFailure();
      }
      chosen.insert(unit);
    }

    for (auto &[unit, regathers] : byUnit) {
      if (!chosen.empty() && !chosen.contains(unit))
        continue;
      for (Regather &r : regathers) {
        r.forwardRelease.erase();
        r.backward.getResult().replaceAllUsesWith(r.forward.getResult());
        r.backward.erase();
      }
    }
  }
};

} // namespace
