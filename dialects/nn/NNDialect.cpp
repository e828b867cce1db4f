//===- NNDialect.cpp - the nn dialect -------------------------------------===//
#include "dialects/nn/NNDialect.h"

using namespace mlir;
using namespace zero::nn;

#include "dialects/nn/NNDialect.cpp.inc"
#include "dialects/nn/NNInterfaces.cpp.inc"

void NNDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/nn/NNOps.cpp.inc"
      >();
}

/// The `nn.*` argument attributes name things: parameters, their moments and
/// the runtime scalars. Anything else under `nn.` is a typo.
LogicalResult NNDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == "nn.grad_of")
    return success();
  bool known = name == kParamAttrName || name == "nn.adam_m" ||
               name == "nn.adam_v" || name == "nn.hyper";
  if (!known)
    return op->emitError() << "argument #" << argIndex
                           << ": unknown nn argument attribute '" << name
                           << "'";
  auto value = dyn_cast<StringAttr>(attr.getValue());
  if (!value || value.getValue().empty())
    return op->emitError() << "argument #" << argIndex << ": '" << name
                           << "' must be a non-empty string, got "
                           << attr.getValue();
  return success();
}
