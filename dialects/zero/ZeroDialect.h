//===- ZeroDialect.h - the zero sharding dialect ----------------*- C++ -*-===//
#ifndef ZERO_DIALECTS_ZERO_ZERODIALECT_H
#define ZERO_DIALECTS_ZERO_ZERODIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/zero/ZeroDialect.h.inc"
#include "dialects/zero/ZeroEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/zero/ZeroAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/zero/ZeroTypes.h.inc"

#include "dialects/zero/ZeroInterfaces.h.inc"

namespace zero::sharding {
class GroupOp;
/// The zero.group `group` names, seen from `op`; null when there is none
/// (the verifiers of the ops that name a group refuse that).
GroupOp lookupGroup(mlir::Operation *op, mlir::FlatSymbolRefAttr group);
} // namespace zero::sharding

#define GET_OP_CLASSES
#include "dialects/zero/ZeroOps.h.inc"

namespace zero::sharding {
/// Argument attribute holding a #zero.placement.
inline constexpr llvm::StringLiteral kPlacementAttrName = "zero.placement";
/// The symbol of the data-parallel group (zero.group @dp) every collective
/// runs over.
inline constexpr llvm::StringLiteral kDataParallelGroup = "dp";

/// The subgroups of a hybrid-sharding mesh that zero-placement declares
/// with --shard-group-size (zero.group @shard ... axis(shard) of @dp).
inline constexpr llvm::StringLiteral kShardGroup = "shard";
inline constexpr llvm::StringLiteral kReplicaGroup = "replica";

/// The module's data-parallel group, or null before zero-split-batch
/// declared it.
GroupOp getDataParallelGroup(mlir::ModuleOp module);
/// The group sharded state is sharded over: @shard with hybrid sharding,
/// else @dp (null before zero-split-batch).
GroupOp getShardingGroup(mlir::ModuleOp module);

/// Attribute of an op that runs on the host (zero-offload-optimizer's
/// nn.adamw and nn.cast): it reads and writes host memory only.
inline constexpr llvm::StringLiteral kHostAttrName = "zero.host";

/// Whether `value` lives in host memory: the result of zero.to_host or of
/// an op that runs on the host, or an argument placed `in host`.
bool isInHostMemory(mlir::Value value);

/// Elements of one rank's shard of a tensor of `numElements` elements.
/// Rounded up without adding first: the verifiers call it on any tensor the
/// input declares, up to INT64_MAX elements.
inline int64_t shardSize(int64_t numElements, int64_t worldSize) {
  return numElements / worldSize + (numElements % worldSize != 0);
}
} // namespace zero::sharding

#endif // ZERO_DIALECTS_ZERO_ZERODIALECT_H
