//===- ZeroOps.cpp - verifiers and interfaces of the zero ops -------------===//
#include "dialects/zero/ZeroDialect.h"
#include "zero/zrt.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace zero::sharding;

#include "dialects/zero/ZeroInterfaces.cpp.inc"

/// Checks (C1) and, when `full`/`shard` are given, (C2) of the ops that move
/// between a whole tensor and its flat shard.
static LogicalResult verifyShardPair(Operation *op, int64_t worldSize,
                                     ShapedType full, ShapedType shard) {
  if (worldSize < 1)
    return op->emitOpError("(C1) world_size must be at least 1, got ")
           << worldSize;
  if (!full || !shard)
    return success();
  int64_t expected = shardSize(full.getNumElements(), worldSize);
  if (shard.getNumElements() != expected)
    return op->emitOpError("(C2) a shard of ")
           << full.getNumElements() << " elements over " << worldSize
           << " ranks has " << expected << " elements, got " << shard;
  return success();
}

LogicalResult AllGatherOp::verify() {
  return verifyShardPair(*this, getWorldSize(), getResult().getType(),
                         getInput().getType());
}

LogicalResult ReduceScatterOp::verify() {
  return verifyShardPair(*this, getWorldSize(), getInput().getType(),
                         getResult().getType());
}

LogicalResult LocalShardOp::verify() {
  return verifyShardPair(*this, getWorldSize(), getInput().getType(),
                         getResult().getType());
}

LogicalResult AllReduceOp::verify() {
  return verifyShardPair(*this, getWorldSize(), nullptr, nullptr);
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
  if (failed(verifyShardPair(*this, getWorldSize(), getValueType(),
                             getInput().getType())))
    return failure();
  return verifyOneWait(*this, getFuture());
}
LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyShardPair(*this, getWorldSize(), getInput().getType(),
                             getValueType())))
    return failure();
  return verifyOneWait(*this, getFuture());
}
LogicalResult AllReduceStartOp::verify() {
  if (failed(verifyShardPair(*this, getWorldSize(), nullptr, nullptr)))
    return failure();
  if (getValueType() != getInput().getType())
    return emitOpError("(C2) the future's tensor must have the input's type ")
           << getInput().getType() << ", got " << getValueType();
  return verifyOneWait(*this, getFuture());
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
    expected += chunks * shardSize(tensor.getNumElements(), chunks);
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
