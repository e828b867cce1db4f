//===- MLPModel.cpp - the built-in MLP preset -----------------------------===//
#include "lib/Frontend/MLPModel.h"

#include "dialects/nn/NNDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace zero {

OwningOpRef<ModuleOp> buildMLP(MLIRContext *ctx, const MLPOptions &options) {
  ctx->loadDialect<nn::NNDialect, func::FuncDialect>();
  Location loc = NameLoc::get(StringAttr::get(ctx, "mlp"));
  for (auto [name, value] :
       {std::pair<StringRef, int64_t>{"--mlp-width", options.width},
        {"--mlp-features", options.features},
        {"--mlp-classes", options.classes},
        {"--batch", options.batch}})
    if (value < 1) {
      emitError(loc) << name << " must be at least 1, got " << value;
      return nullptr;
    }
  if (options.hiddenLayers < 0) {
    emitError(loc) << "--mlp-hidden-layers must not be negative, got "
                   << options.hiddenLayers;
    return nullptr;
  }
  if (options.activation != "relu" && options.activation != "gelu") {
    emitError(loc) << "--mlp-activation must be relu or gelu, got '"
                   << options.activation << "'";
    return nullptr;
  }

  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  Type f32 = b.getF32Type();
  auto tensor = [&](ArrayRef<int64_t> shape, Type elementType) {
    return RankedTensorType::get(shape, elementType);
  };

  // Arguments: the batch, then each layer's weight [in, out] and bias [out].
  SmallVector<Type> argTypes{tensor({options.batch, options.features}, f32),
                             tensor({options.batch}, b.getI32Type())};
  SmallVector<std::string> paramNames;
  int64_t in = options.features;
  for (int64_t layer = 0; layer <= options.hiddenLayers; ++layer) {
    int64_t out =
        layer == options.hiddenLayers ? options.classes : options.width;
    argTypes.push_back(tensor({in, out}, f32));
    argTypes.push_back(tensor({out}, f32));
    paramNames.push_back("fc" + std::to_string(layer) + ".weight");
    paramNames.push_back("fc" + std::to_string(layer) + ".bias");
    in = out;
  }
  auto func = func::FuncOp::create(
      b, loc, "forward",
      b.getFunctionType(argTypes, {tensor({}, f32)}));
  func.setArgAttr(0, "nn.data", b.getStringAttr("features"));
  func.setArgAttr(1, "nn.data", b.getStringAttr("labels"));
  for (auto [i, name] : llvm::enumerate(paramNames))
    func.setArgAttr(i + 2, nn::kParamAttrName, b.getStringAttr(name));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);

  Value h = body->getArgument(0);
  for (int64_t layer = 0; layer <= options.hiddenLayers; ++layer) {
    Location layerLoc =
        NameLoc::get(b.getStringAttr("fc" + std::to_string(layer)));
    Value w = body->getArgument(2 + 2 * layer);
    Value bias = body->getArgument(3 + 2 * layer);
    h = nn::MatmulOp::create(b, layerLoc, h, w);
    h = nn::BiasAddOp::create(b, layerLoc, h.getType(), h, bias);
    if (layer == options.hiddenLayers)
      break;
    if (options.activation == "gelu")
      h = nn::GeluOp::create(b, layerLoc, h);
    else
      h = nn::ReluOp::create(b, layerLoc, h);
  }
  Value loss = nn::SoftmaxCrossEntropyOp::create(
      b, NameLoc::get(b.getStringAttr("loss")), tensor({}, f32), h,
      body->getArgument(1), IntegerAttr());
  func::ReturnOp::create(b, loc, loss);
  return module;
}

} // namespace zero
