//===- ZeroOps.cpp - verifiers and interfaces of the zero ops -------------===//
#include "dialects/zero/ZeroDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "zero/zrt.h"

#include "mlir/IR/OpImplementation.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace zero::sharding;

#include "dialects/zero/ZeroInterfaces.cpp.inc"

GroupOp zero::sharding::lookupGroup(Operation *op, FlatSymbolRefAttr group) {
  return SymbolTable::lookupNearestSymbolFrom<GroupOp>(op, group);
}

GroupOp zero::sharding::getDataParallelGroup(ModuleOp module) {
  return SymbolTable::lookupNearestSymbolFrom<GroupOp>(
      module, StringAttr::get(module.getContext(), kDataParallelGroup));
}

GroupOp zero::sharding::getShardingGroup(ModuleOp module) {
  if (auto shard = SymbolTable::lookupNearestSymbolFrom<GroupOp>(
          module, StringAttr::get(module.getContext(), kShardGroup)))
    return shard;
  return getDataParallelGroup(module);
}

LogicalResult GroupOp::verify() {
  if (getWorldSize() < 1)
    return emitOpError("(C1) world_size must be at least 1, got ")
           << getWorldSize();
  if (std::optional<int64_t> stage = getStage(); stage && (*stage < 0 || *stage > 3))
    return emitOpError("(C2) stage must be 0, 1, 2 or 3, got ") << *stage;
  if (getAxis().has_value() != bool(getParentAttr()))
    return emitOpError("(C3) a subgroup names its axis and the group it is "
                       "one 'of'; a group without an axis has no 'of'");
  if (!getParentAttr())
    return success();
  auto parent = lookupGroup(*this, getParentAttr());
  if (!parent || parent.getAxis())
    return emitOpError("(C3) '")
           << getParentAttr().getValue()
           << "' does not name a zero.group without an axis";
  if (parent.getWorldSize() % getWorldSize() != 0)
    return emitOpError("(C3) a subgroup of ")
           << getWorldSize() << " ranks does not divide @"
           << getParentAttr().getValue() << "'s " << parent.getWorldSize();
  return success();
}

/// Checks (C1), that `group` names a zero.group, and, when `full`/`shard`
/// are given, (C2): the shard is the padded 1/W of the whole tensor.
static LogicalResult verifyShardPair(Operation *op, FlatSymbolRefAttr group,
                                     SymbolTableCollection &symbols,
                                     ShapedType full, ShapedType shard) {
  auto groupOp = symbols.lookupNearestSymbolFrom<GroupOp>(op, group);
  if (!groupOp)
    return op->emitOpError("(C1) '")
           << group.getValue() << "' does not name a zero.group of the module";
  if (!full || !shard)
    return success();
  int64_t worldSize = groupOp.getWorldSize();
  int64_t expected = shardSize(full.getNumElements(), worldSize);
  if (shard.getNumElements() != expected)
    return op->emitOpError("(C2) a shard of ")
           << full.getNumElements() << " elements over " << worldSize
           << " ranks has " << expected << " elements, got " << shard;
  return success();
}

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyShardPair(*this, getGroupAttr(), symbols,
                         getResult().getType(), getInput().getType());
}
LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyShardPair(*this, getGroupAttr(), symbols, getInput().getType(),
                         getResult().getType());
}
LogicalResult LocalShardOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyShardPair(*this, getGroupAttr(), symbols, getInput().getType(),
                         getResult().getType());
}
LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyShardPair(*this, getGroupAttr(), symbols, nullptr, nullptr);
}

/// A collective's traffic over `full`, the whole tensor, by zrt.h's formula.
static int64_t trafficOf(zrt_collective kind, ShapedType full,
                         int64_t worldSize) {
  int64_t n = full.getNumElements();
  return zrt_traffic_elements(kind, n, shardSize(n, worldSize), worldSize);
}

int64_t AllGatherOp::getTrafficElements() {
  return trafficOf(ZRT_ALL_GATHER, getResult().getType(), getWorldSize());
}
int64_t ReduceScatterOp::getTrafficElements() {
  return trafficOf(ZRT_REDUCE_SCATTER, getInput().getType(), getWorldSize());
}
int64_t AllReduceOp::getTrafficElements() {
  return trafficOf(ZRT_ALL_REDUCE, getInput().getType(), getWorldSize());
}

/// (C3) of the asynchronous collectives: one wait completes the transfer.
static LogicalResult verifyOneWait(Operation *op, Value future) {
  if (!future.hasOneUse() || !isa<WaitOp>(*future.getUsers().begin()))
    return op->emitOpError("(C3) the future must have exactly one use, a "
                           "zero.wait");
  return success();
}

template <typename StartOp>
static WaitOp waitOf(StartOp op) {
  return cast<WaitOp>(*op.getFuture().getUsers().begin());
}

LogicalResult AllGatherStartOp::verify() {
  return verifyOneWait(*this, getFuture());
}
LogicalResult ReduceScatterStartOp::verify() {
  return verifyOneWait(*this, getFuture());
}
LogicalResult AllReduceStartOp::verify() {
  if (getValueType() != getInput().getType())
    return emitOpError("(C2) the future's tensor must have the input's type ")
           << getInput().getType() << ", got " << getValueType();
  return verifyOneWait(*this, getFuture());
}
LogicalResult
AllGatherStartOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyShardPair(*this, getGroupAttr(), symbols, getValueType(),
                         getInput().getType());
}
LogicalResult
ReduceScatterStartOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyShardPair(*this, getGroupAttr(), symbols, getInput().getType(),
                         getValueType());
}
LogicalResult
AllReduceStartOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyShardPair(*this, getGroupAttr(), symbols, nullptr, nullptr);
}
WaitOp AllGatherStartOp::getWait() { return waitOf(*this); }
WaitOp ReduceScatterStartOp::getWait() { return waitOf(*this); }
WaitOp AllReduceStartOp::getWait() { return waitOf(*this); }

int64_t AllGatherStartOp::getTrafficElements() {
  return trafficOf(ZRT_ALL_GATHER, getValueType(), getWorldSize());
}
int64_t ReduceScatterStartOp::getTrafficElements() {
  return trafficOf(ZRT_REDUCE_SCATTER, getInput().getType(), getWorldSize());
}
int64_t AllReduceStartOp::getTrafficElements() {
  return trafficOf(ZRT_ALL_REDUCE, getInput().getType(), getWorldSize());
}

bool zero::sharding::isInHostMemory(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto function =
        dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    auto placement = function ? function.getArgAttrOfType<PlacementAttr>(
                                    arg.getArgNumber(), kPlacementAttrName)
                              : PlacementAttr();
    return placement && placement.getMemory() == Memory::Host;
  }
  Operation *producer = value.getDefiningOp();
  return isa<ToHostOp>(producer) || producer->hasAttr(kHostAttrName);
}

LogicalResult ToHostOp::verify() {
  if (isInHostMemory(getInput()))
    return emitOpError("(C1) the input is in host memory already");
  return success();
}

LogicalResult ToDeviceOp::verify() {
  if (!isInHostMemory(getInput()))
    return emitOpError("(C1) the input is in device memory already");
  return success();
}

LogicalResult ReleaseOp::verify() {
  // Release ends the buffer's life; a later use would read freed memory.
  Operation *self = getOperation();
  for (Operation *user : getInput().getUsers()) {
    if (user == self || user->getBlock() != self->getBlock())
      continue;
    if (self->isBeforeInBlock(user))
      return emitOpError("(C1) the released tensor is used after the release, "
                         "by '")
             << user->getName() << "' at " << user->getLoc();
  }
  return success();
}

/// (C1)-(C3) of zero.pack and zero.unpack: `flat` is the packed buffer of
/// `members` cut into `chunks` chunks each.
static LogicalResult verifyPacking(Operation *op, int64_t chunks,
                                   ShapedType flat, TypeRange members) {
  if (chunks < 1)
    return op->emitOpError("(C1) chunks must be at least 1, got ") << chunks;
  int64_t expected = 0;
  for (Type member : members) {
    auto tensor = cast<ShapedType>(member);
    if (tensor.getElementType() != flat.getElementType())
      return op->emitOpError("(C2) every packed tensor must have element "
                             "type ")
             << flat.getElementType() << ", got " << member;
    // chunks is any int64_t the input gives: a sum past INT64_MAX is no
    // buffer.
    int64_t padded;
    if (llvm::MulOverflow(chunks,
                          shardSize(tensor.getNumElements(), chunks),
                          padded) ||
        llvm::AddOverflow(expected, padded, expected))
      return op->emitOpError("(C3) ")
             << members.size() << " tensors in " << chunks
             << " chunks pack into more than "
             << std::numeric_limits<int64_t>::max() << " elements";
  }
  if (flat.getNumElements() != expected)
    return op->emitOpError("(C3) ")
           << members.size() << " tensors in " << chunks
           << " chunks pack into " << expected << " elements, got " << flat;
  return success();
}

LogicalResult PackOp::verify() {
  return verifyPacking(*this, getChunks(), getResult().getType(),
                       getInputs().getTypes());
}

LogicalResult UnpackOp::verify() {
  return verifyPacking(*this, getChunks(), getInput().getType(),
                       getResults().getTypes());
}

#define GET_OP_CLASSES
#include "dialects/zero/ZeroOps.cpp.inc"
