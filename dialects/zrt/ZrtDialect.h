//===- ZrtDialect.h - the zrt runtime dialect -------------------*- C++ -*-===//
#ifndef ZERO_DIALECTS_ZRT_ZRTDIALECT_H
#define ZERO_DIALECTS_ZRT_ZRTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/zrt.h"

namespace zero::zrt {
/// Elements of a buffer (a statically shaped memref), saturated at
/// INT64_MAX.
int64_t getNumElements(mlir::Value buffer);
/// Bytes of one element of a buffer.
int64_t getElementBytes(mlir::Value buffer);
/// Bytes of a buffer, saturated at INT64_MAX.
int64_t getByteSize(mlir::Value buffer);
/// The zrt_dtype of a buffer of floats or exact accumulators (int32 buffers
/// report f32, as the runtime knows which arguments are int32).
zrt_dtype getDType(mlir::Value buffer);
/// The same, of an element type.
zrt_dtype getElementDType(mlir::Type element);

/// A collective of include/zero/zrt_collectives.def, as the compiler reads
/// it: what the verifiers, the predictions, the report and the call
/// lowering ask instead of naming kinds.
enum class CollectiveShape {
  Gather,  // a shard of S elements in, the whole tensor out
  Scatter, // the whole tensor in, a shard out
  Whole    // one buffer's size in and out
};
struct CollectiveInfo {
  /// "all_gather": the runtime's name (its ledger, trace and messages).
  const char *name;
  CollectiveShape shape;
  /// Whether the ranks' elements are summed (else moved as they are).
  bool sums;
  /// Gather and Scatter split the tensor into W shards of S elements.
  bool sharded() const { return shape != CollectiveShape::Whole; }
};
const CollectiveInfo &getCollectiveInfo(zrt_collective kind);

/// The runtime's own state (its ledger, streams and trace), which every zrt
/// op reads and writes (ZrtOps.td's Zrt_Op): so no op is reordered, merged
/// or dropped, whatever it does to its buffers.
struct RuntimeStateResource
    : mlir::SideEffects::Resource::Base<RuntimeStateResource> {
  llvm::StringRef getName() final { return "zrt::RuntimeState"; }
};
} // namespace zero::zrt

#include "dialects/zrt/ZrtDialect.h.inc"
#include "dialects/zrt/ZrtEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/zrt/ZrtAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/zrt/ZrtTypes.h.inc"

#include "dialects/zrt/ZrtInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/zrt/ZrtOps.h.inc"

namespace zero::zrt {
/// The zrt.alloc a buffer, or a view of one, comes from; null for an
/// argument's buffer.
AllocOp getAllocation(mlir::Value buffer);

/// The buffer and every zrt.view of it, transitively: the names under
/// which ops read or write its bytes.
llvm::SmallVector<mlir::Value> getAliases(mlir::Value buffer);

/// The sizes of the groups a program's collectives run over, as its
/// description declares them (zrt.declare_program, zrt.declare_shard_groups).
struct GroupSizes {
  int64_t worldSize = 1;
  /// The shard groups' size with hybrid sharding; 0 without.
  int64_t shardGroupSize = 0;

  /// Reads them from `describe` (@zero_program_describe; null: one rank).
  static GroupSizes declaredIn(mlir::Operation *describe);
  /// Ranks of `group` (zrt.h: without shard groups, shard is the world
  /// and replica this rank alone).
  int64_t sizeOf(Group group) const {
    int64_t shard = shardGroupSize ? shardGroupSize : worldSize;
    switch (group) {
    case Group::World:
      return worldSize;
    case Group::Shard:
      return shard;
    case Group::Replica:
      return worldSize / shard;
    }
    return worldSize;
  }
  /// Ranks of the group `op` runs over.
  int64_t sizeOf(CollectiveOpInterface op) const { return sizeOf(op.getGroup()); }
};

/// Argument attribute of the step's loss output buffer.
inline constexpr llvm::StringLiteral kLossAttrName = "zrt.loss";
/// Function attribute: the arena bytes per category zero-plan-memory planned.
inline constexpr llvm::StringLiteral kArenaBytesAttrName = "zrt.arena_bytes";
/// Function attribute: the bytes of the one arena zero-plan-memory planned
/// for the temporaries of every category (bound when it is smaller).
inline constexpr llvm::StringLiteral kSharedArenaBytesAttrName =
    "zrt.shared_arena_bytes";
/// Function attribute: the bytes the staging copies of its padded
/// collectives need at most at once (the runtime allocates them).
inline constexpr llvm::StringLiteral kStagingBytesAttrName =
    "zrt.staging_bytes";
} // namespace zero::zrt

#endif // ZERO_DIALECTS_ZRT_ZRTDIALECT_H
