//===- OffloadOptimizer.cpp - AdamW and its state in host memory ----------===//
//
// ZeRO-Offload (Ren et al., 2021) keeps the float32 optimizer state (the
// moments, and the master weights of bf16 parameters) in host memory and
// runs the optimizer on the host: the device keeps the parameters, the
// gradients and the activations, and a rank's optimizer state, 12 bytes a
// parameter element over the ranks it is sharded over, leaves it. Each step
// moves what AdamW reads down (the gradient, and an f32 parameter that has
// no master on the host) and the new parameter up.
//
// This pass states that on the tensor program, after the reductions are in
// place (and after accumulation split the step, where it did):
//   - the optimizer arguments are placed `in host` (#zero.placement);
//   - every operand of an nn.adamw in device memory is copied down with
//     zero.to_host, each value once (the hyperparameters and the clipping
//     coefficient serve every update);
//   - the update runs on the host (`zero.host`), and so does the cast of a
//     new master to its bf16 parameter, which halves the upload;
//   - a new parameter the device reads (the argument it updates, or the
//     gather of stages 1-2) is copied up with zero.to_device.
// Nothing else changes: the same kernels in the same order, so training is
// the same bit for bit; zero-lower-to-zrt gives host values buffers in
// the host categories of the ledger.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

namespace zero {
#define GEN_PASS_DEF_OFFLOADOPTIMIZER
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::sharding;

namespace {
struct OffloadOptimizerPass
    : zero::impl::OffloadOptimizerBase<OffloadOptimizerPass> {
  using OffloadOptimizerBase::OffloadOptimizerBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = lookupFunction(module, kTrainStepFuncName,
                                       getArgument(), "run zero-adamw first");
    if (!step)
      return signalPassFailure();
    SmallVector<func::FuncOp, 2> funcs{step};
    if (auto apply = module.lookupSymbol<func::FuncOp>(kTrainApplyFuncName))
      funcs.push_back(apply);
    unsigned numUpdates = 0;
    for (func::FuncOp func : funcs) {
      if (failed(placeStateOnHost(func)))
        return signalPassFailure();
      numUpdates += offloadUpdates(func);
    }
    if (numUpdates == 0) {
      step.emitError() << getArgument()
                       << ": the program has no nn.adamw to run on the host";
      return signalPassFailure();
    }
  }

  /// Places the moments and master weights of `func` in host memory.
  LogicalResult placeStateOnHost(func::FuncOp func) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto placement =
          func.getArgAttrOfType<PlacementAttr>(i, kPlacementAttrName);
      if (!placement)
        return func.emitError()
               << getArgument() << ": argument #" << i
               << " has no #zero.placement; run zero-placement first";
      if (placement.getRole() != Role::Moment &&
          placement.getRole() != Role::Master)
        continue;
      func.setArgAttr(i, kPlacementAttrName,
                      PlacementAttr::get(&getContext(), placement.getRole(),
                                         placement.getDistribution(),
                                         placement.getGroup(), Memory::Host));
    }
    return success();
  }

  /// Moves every nn.adamw of `func` to the host; returns how many.
  unsigned offloadUpdates(func::FuncOp func) {
    SmallVector<nn::AdamWOp> updates;
    func.walk([&](nn::AdamWOp update) { updates.push_back(update); });
    // The host copy of each device value an update reads, made before the
    // first update that reads it (the updates run in program order).
    DenseMap<Value, Value> hostCopies;
    UnitAttr host = UnitAttr::get(&getContext());
    for (nn::AdamWOp update : updates) {
      OpBuilder b(update);
      for (OpOperand &operand : update->getOpOperands()) {
        Value value = operand.get();
        if (isInHostMemory(value))
          continue;
        Value &copy = hostCopies[value];
        if (!copy)
          copy = ToHostOp::create(b, value.getLoc(), value);
        operand.set(copy);
      }
      update->setAttr(kHostAttrName, host);
      Value newParam = update.getNewParam();
      // A bf16 parameter's new value is the new master, cast on the host.
      for (Operation *user : llvm::make_early_inc_range(newParam.getUsers()))
        if (auto cast = dyn_cast<nn::CastOp>(user)) {
          cast->setAttr(kHostAttrName, host);
          copyUpWhereTheDeviceReads(cast.getResult());
        }
      copyUpWhereTheDeviceReads(newParam);
    }
    return updates.size();
  }

  /// Gives the readers of host value `value` in device memory (a gather,
  /// the return into a device argument) one copy of it on the device.
  void copyUpWhereTheDeviceReads(Value value) {
    SmallVector<OpOperand *> deviceUses;
    for (OpOperand &use : value.getUses())
      if (!readsInHostMemory(use))
        deviceUses.push_back(&use);
    if (deviceUses.empty())
      return;
    OpBuilder b(value.getContext());
    b.setInsertionPointAfterValue(value);
    Value copy = ToDeviceOp::create(b, value.getLoc(), value);
    for (OpOperand *use : deviceUses)
      use->set(copy);
  }

  /// Whether `use` reads its value in host memory: an op that runs on the
  /// host, or the return of a new state into a host argument.
  static bool readsInHostMemory(OpOperand &use) {
    Operation *owner = use.getOwner();
    if (owner->hasAttr(kHostAttrName))
      return true;
    auto ret = dyn_cast<func::ReturnOp>(owner);
    if (!ret)
      return false;
    auto func = cast<func::FuncOp>(ret->getParentOp());
    auto updated = func.getResultAttrOfType<IntegerAttr>(use.getOperandNumber(),
                                                         kUpdatesAttrName);
    if (!updated)
      return false;
    auto placement = func.getArgAttrOfType<PlacementAttr>(updated.getInt(),
                                                          kPlacementAttrName);
    return placement && placement.getMemory() == Memory::Host;
  }
};
} // namespace
