//===- PassUtils.cpp - helpers shared by the zero-opt passes --------------===//
#include "passes/Utils/PassUtils.h"

#include "dialects/nn/NNDialect.h"
#include "dialects/zero/ZeroDialect.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace zero {

func::FuncOp lookupFunction(ModuleOp module, StringRef name, StringRef passName,
                            StringRef producedBy) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func) {
    module.emitError() << passName << ": expected a func.func @" << name << " ("
                       << producedBy << ")";
    return nullptr;
  }
  // Every pass rewrites the function's body.
  if (func.isExternal()) {
    func.emitError() << passName << ": @" << name
                     << " is a declaration; expected a func.func with a body ("
                     << producedBy << ")";
    return nullptr;
  }
  return func;
}

StringRef getArgString(func::FuncOp func, unsigned index, StringRef attrName) {
  if (auto attr = func.getArgAttrOfType<StringAttr>(index, attrName))
    return attr.getValue();
  return {};
}

StringRef getParamName(func::FuncOp func, unsigned index) {
  return getArgString(func, index, nn::kParamAttrName);
}

Operation *getShardReduction(Value gradient) {
  if (auto replicas = gradient.getDefiningOp<sharding::AllReduceOp>())
    if (replicas.getGroup() == sharding::kReplicaGroup)
      gradient = replicas.getInput();
  return gradient.getDefiningOp<sharding::ReduceScatterOp>();
}

Location withCollectiveLabel(Location loc, StringRef name) {
  if (name.empty())
    return loc;
  return NameLoc::get(StringAttr::get(loc.getContext(), name), loc);
}

StringRef getCollectiveLabel(Location loc) {
  if (auto named = loc->findInstanceOf<NameLoc>())
    return named.getName().getValue();
  return {};
}

std::string bucketLabel(ArrayRef<Location> labels) {
  constexpr size_t kNamed = 3;
  std::string label = "bucket of " + std::to_string(labels.size()) + ":";
  for (auto [i, loc] : llvm::enumerate(labels)) {
    if (i == kNamed) {
      label += ", ...";
      break;
    }
    StringRef name = getCollectiveLabel(loc);
    label += (i ? ", " : " ") + (name.empty() ? "?" : name.str());
  }
  return label;
}

StringRef getParamUnit(StringRef paramName) {
  size_t start = 0;
  while (start < paramName.size()) {
    size_t end = paramName.find('.', start);
    if (end == StringRef::npos)
      end = paramName.size();
    StringRef component = paramName.slice(start, end);
    if (!component.empty() &&
        llvm::all_of(component, [](char c) { return llvm::isDigit(c); }))
      return paramName.take_front(end);
    start = end + 1;
  }
  return paramName;
}

bool isBlockUnit(StringRef unit) {
  StringRef last = unit.rsplit('.').second;
  if (last.empty())
    last = unit;
  return !last.empty() && llvm::all_of(last, llvm::isDigit);
}

int64_t getNumElements(Type type) {
  return cast<ShapedType>(type).getNumElements();
}

int64_t getByteSize(Type type) {
  auto shaped = cast<ShapedType>(type);
  return shaped.getNumElements() * ((shaped.getElementTypeBitWidth() + 7) / 8);
}

} // namespace zero
