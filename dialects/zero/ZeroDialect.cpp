//===- ZeroDialect.cpp - the zero sharding dialect ------------------------===//
#include "dialects/zero/ZeroDialect.h"

#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace zero::sharding;

#include "dialects/zero/ZeroDialect.cpp.inc"
#include "dialects/zero/ZeroEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/zero/ZeroAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/zero/ZeroTypes.cpp.inc"

void ZeroDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/zero/ZeroAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/zero/ZeroTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/zero/ZeroOps.cpp.inc"
      >();
}

/// `zero.host` marks an op that runs on the host: zero-offload-optimizer's
/// AdamW updates and the casts of their new masters, which read host memory
/// only.
LogicalResult ZeroDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  // The other zero.* attributes of ops (on functions and the module) are
  // read by the passes that set them.
  if (attr.getName() != kHostAttrName)
    return success();
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << kHostAttrName
                           << "' must be a unit attribute";
  // By name: the zero dialect does not depend on nn.
  StringRef opName = op->getName().getStringRef();
  if (opName != "nn.adamw" && opName != "nn.cast")
    return op->emitOpError() << "runs on the host ('" << kHostAttrName
                             << "'), which only nn.adamw and nn.cast can";
  for (OpOperand &operand : op->getOpOperands())
    if (!isInHostMemory(operand.get()))
      return op->emitOpError()
             << "runs on the host ('" << kHostAttrName << "') but operand #"
             << operand.getOperandNumber()
             << " is in device memory; copy it with zero.to_host";
  return success();
}

/// Checks the argument attributes of the dialect: `zero.placement` holds a
/// #zero.placement, and `zero.unsharded_type` (on a sharded argument) is the
/// whole tensor whose shard over the ranks of the module's zero.group the
/// argument holds.
LogicalResult ZeroDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kPlacementAttrName) {
    if (!isa<PlacementAttr>(attr.getValue()))
      return op->emitError() << "argument #" << argIndex << ": '" << name
                             << "' must be a #zero.placement, got "
                             << attr.getValue();
    return success();
  }
  if (name != "zero.unsharded_type")
    return success();
  auto typeAttr = dyn_cast<TypeAttr>(attr.getValue());
  auto full = typeAttr ? dyn_cast<RankedTensorType>(typeAttr.getValue())
                       : RankedTensorType();
  if (!full || !full.hasStaticShape())
    return op->emitError() << "argument #" << argIndex << ": '" << name
                           << "' must be a statically shaped tensor type";
  auto module = op->getParentOfType<ModuleOp>();
  auto function = dyn_cast<FunctionOpInterface>(op);
  // Sharded over the group its placement names (hybrid sharding), else @dp.
  auto placement =
      function ? function.getArgAttrOfType<PlacementAttr>(argIndex,
                                                          kPlacementAttrName)
               : PlacementAttr();
  StringRef groupName = placement && placement.getGroup()
                            ? placement.getGroup().getValue()
                            : StringRef(kDataParallelGroup);
  GroupOp group =
      module ? SymbolTable::lookupNearestSymbolFrom<GroupOp>(
                   module, StringAttr::get(op->getContext(), groupName))
             : GroupOp();
  if (!group || !function)
    return op->emitError() << "argument #" << argIndex << ": '" << name
                           << "' needs a function in a module with a "
                              "zero.group @"
                           << groupName;
  int64_t worldSize = group.getWorldSize();
  auto shard = dyn_cast<ShapedType>(function.getArgumentTypes()[argIndex]);
  int64_t expected = shardSize(full.getNumElements(), worldSize);
  if (!shard || shard.getRank() != 1 || shard.getNumElements() != expected)
    return op->emitError() << "argument #" << argIndex << " holds a shard of "
                           << full << " over " << worldSize
                           << " ranks, so it must be tensor<" << expected
                           << "xf32>, got " << function.getArgumentTypes()[argIndex];
  return success();
}
