//===- NNDialect.cpp - the nn dialect -------------------------------------===//
#include "dialects/nn/NNDialect.h"

#include "llvm/ADT/StringExtras.h"

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

/// The `nn.*` argument attributes say what an argument is: a parameter, an
/// optimizer state or runtime scalar of one, a kind of data, and how a
/// parameter starts. Anything else under `nn.` is a typo.
LogicalResult NNDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto error = [&]() {
    return op->emitError() << "argument #" << argIndex << ": ";
  };
  if (name == "nn.grad_of")
    return success();
  if (name == "nn.init_scale") {
    if (!isa<FloatAttr>(attr.getValue()))
      return error() << "'" << name << "' must be a float";
    return success();
  }
  // The remaining attributes hold a string, from a fixed set for some.
  std::optional<ArrayRef<StringRef>> allowed;
  static constexpr StringRef dataKinds[] = {"features", "labels", "tokens",
                                            "targets", "positions"};
  static constexpr StringRef initKinds[] = {"zeros", "ones", "uniform",
                                            "normal"};
  if (name == "nn.data")
    allowed = dataKinds;
  else if (name == "nn.init")
    allowed = initKinds;
  else if (name != kParamAttrName && name != "nn.adam_m" &&
           name != "nn.adam_v" && name != "nn.hyper" && name != "nn.master" &&
           name != "nn.grad_accum")
    return error() << "unknown nn argument attribute '" << name << "'";
  auto value = dyn_cast<StringAttr>(attr.getValue());
  if (!value || value.getValue().empty())
    return error() << "'" << name << "' must be a non-empty string, got "
                   << attr.getValue();
  if (allowed && !llvm::is_contained(*allowed, value.getValue()))
    return error() << "'" << name << "' must be one of "
                   << llvm::join(*allowed, ", ") << ", got '"
                   << value.getValue() << "'";
  return success();
}

/// The `nn.*` attributes of ops: `nn.seq_len`, on a language model's
/// function, is the tokens per sequence by which the batch's rows are split
/// and counted; zero or less would divide by zero there.
LogicalResult NNDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != "nn.seq_len")
    return success();
  auto seqLen = dyn_cast<IntegerAttr>(attr.getValue());
  if (!seqLen || seqLen.getInt() < 1)
    return op->emitOpError() << "attribute '" << name
                             << "' must be a positive integer (tokens per "
                                "sequence), got "
                             << attr.getValue();
  return success();
}
