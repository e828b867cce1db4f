//===- AdamW.cpp - append the AdamW update to @train_step -----------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"

namespace zero {
#define GEN_PASS_DEF_ADAMW
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {
/// A parameter and the gradient @train_step returns for it.
struct ParamGrad {
  unsigned paramIndex;
  Value grad;
};

struct AdamWPass : zero::impl::AdamWBase<AdamWPass> {
  using AdamWBase::AdamWBase;

  void runOnOperation() override {
    func::FuncOp func = lookupFunction(getOperation(), kTrainStepFuncName,
                                       getArgument(), "run nn-autodiff first");
    if (!func)
      return signalPassFailure();
    FailureOr<SmallVector<ParamGrad>> grads = collectGradients(func);
    if (failed(grads))
      return signalPassFailure();
    appendUpdate(func, *grads);
  }

  /// The gradient results, found through their `nn.grad_of` attributes.
  FailureOr<SmallVector<ParamGrad>> collectGradients(func::FuncOp func) {
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    SmallVector<ParamGrad> grads;
    for (unsigned i = 1, e = func.getNumResults(); i < e; ++i) {
      auto gradOf = func.getResultAttrOfType<IntegerAttr>(i, kGradOfAttrName);
      if (!gradOf)
        return func.emitError()
               << getArgument() << ": result #" << i
               << " of @train_step has no " << kGradOfAttrName << " attribute";
      grads.push_back(
          {static_cast<unsigned>(gradOf.getInt()), ret.getOperand(i)});
    }
    if (grads.empty())
      return func.emitError()
             << getArgument() << ": @train_step has no gradients to apply";
    return grads;
  }

  void appendUpdate(func::FuncOp func, ArrayRef<ParamGrad> grads) {
    MLIRContext *ctx = &getContext();
    Builder attrs(ctx);
    Location loc = func.getLoc();
    // New arguments: per parameter a float32 master copy when the parameter
    // is bfloat16, and the two moments; then the hyperparameters, as runtime
    // scalars so that changing one is a flag, not a recompilation.
    auto appendArg = [&](Type type, StringRef attrName, StringRef value) {
      unsigned index = func.getNumArguments();
      (void)func.insertArgument(index, type,
                                attrs.getDictionaryAttr(attrs.getNamedAttr(
                                    attrName, attrs.getStringAttr(value))),
                                loc);
      return index;
    };
    SmallVector<std::optional<unsigned>> masterIndices;
    SmallVector<unsigned> mIndices, vIndices;
    for (const ParamGrad &pg : grads) {
      StringRef name = getParamName(func, pg.paramIndex);
      auto type =
          cast<RankedTensorType>(func.getArgument(pg.paramIndex).getType());
      auto stateType = type.clone(Float32Type::get(ctx));
      masterIndices.push_back(
          type.getElementType().isF32()
              ? std::nullopt
              : std::optional(appendArg(stateType, kMasterAttrName, name)));
      mIndices.push_back(appendArg(stateType, kAdamMAttrName, name));
      vIndices.push_back(appendArg(stateType, kAdamVAttrName, name));
    }
    auto scalar = RankedTensorType::get({}, Float32Type::get(ctx));
    auto hyper = [&](StringRef name) {
      return func.getArgument(appendArg(scalar, kHyperAttrName, name));
    };
    Value lr = hyper("lr"), step = hyper("step"), beta1 = hyper("beta1"),
          beta2 = hyper("beta2"), eps = hyper("eps"),
          weightDecay = hyper("weight_decay");

    Block &entry = func.getBody().front();
    Operation *terminator = entry.getTerminator();
    OpBuilder b(terminator);
    // Results: the loss, then each new state tied to the argument it updates.
    SmallVector<Value> results{terminator->getOperand(0)};
    SmallVector<unsigned> updates;
    SmallVector<std::pair<Value, unsigned>> masters, ms, vs;
    for (auto [i, pg] : llvm::enumerate(grads)) {
      // AdamW runs on float32: the parameter, or its master copy.
      unsigned stateIndex = masterIndices[i].value_or(pg.paramIndex);
      auto update = nn::AdamWOp::create(
          b, pg.grad.getLoc(), func.getArgument(stateIndex), pg.grad,
          func.getArgument(mIndices[i]), func.getArgument(vIndices[i]), lr,
          step, beta1, beta2, eps, weightDecay, /*grad_scale=*/Value());
      Value newParam = update.getNewParam();
      if (masterIndices[i]) {
        masters.push_back({newParam, *masterIndices[i]});
        newParam = nn::CastOp::create(b, pg.grad.getLoc(),
                                      func.getArgument(pg.paramIndex).getType(),
                                      newParam);
      }
      results.push_back(newParam);
      updates.push_back(pg.paramIndex);
      ms.push_back({update.getNewExpAvg(), mIndices[i]});
      vs.push_back({update.getNewExpAvgSq(), vIndices[i]});
    }
    for (auto group : {&masters, &ms, &vs})
      for (auto [value, argIndex] : *group) {
        results.push_back(value);
        updates.push_back(argIndex);
      }
    func::ReturnOp::create(b, terminator->getLoc(), results);
    terminator->erase();

    func.removeResAttrsAttr();
    func.setType(FunctionType::get(ctx, entry.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
    for (auto [i, argIndex] : llvm::enumerate(updates))
      func.setResultAttr(i + 1, kUpdatesAttrName,
                         attrs.getI64IntegerAttr(argIndex));
  }
};
} // namespace
