//===- PlanMemory.cpp - offsets in per-rank arenas from liveness ----------===//
//
// After the lowering every temporary is a zrt_alloc with a constant size
// and a category, freed after its last use, and every padded collective
// holds a staging copy from its start to its wait. That is all a static
// memory planner needs: each buffer's size and live interval. This pass
// places every buffer of a category at an offset in that category's arena
// so that buffers live at the same time never overlap, and records the
// arena sizes, so the compiler states each rank's memory per category as
// an address layout, fragmentation included, not only as a sum of live
// bytes.
//
// Placement is greedy by size (largest first, each at the lowest offset
// that fits between the buffers it overlaps in time), the heuristic of
// TFLite's and XLA's arena planners: a few percent above the live-bytes
// peak on transformer steps, and never below it.
//
//===----------------------------------------------------------------------===//
#include "passes/PassUtils.h"
#include "passes/Passes.h"
#include "passes/RuntimeCalls.h"
#include "zero/zrt.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace zero {
#define GEN_PASS_DEF_PLANMEMORY
#include "passes/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// One buffer of a lowered function: a zrt_alloc, or the staging copy of a
/// padded collective (then `alloc` is the collective's call).
struct PlannedBuffer {
  int32_t category;
  int64_t bytes;
  unsigned start, end; // call positions, inclusive
  Operation *alloc;
  bool staging;
  int64_t offset = 0;
};

struct PlanMemoryPass : zero::impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (alignment < 1 || (alignment & (alignment - 1))) {
      module.emitError() << getArgument()
                         << ": alignment must be a power of two, got "
                         << static_cast<int64_t>(alignment);
      return signalPassFailure();
    }
    auto describe = module.lookupSymbol<func::FuncOp>("zero_program_describe");
    auto step = module.lookupSymbol<func::FuncOp>("zero_program_step");
    if (!describe || !step) {
      module.emitError() << getArgument()
                         << ": expected the lowered program (run "
                            "zero-lower-to-runtime first)";
      return signalPassFailure();
    }
    int64_t worldSize = 1;
    describe.walk([&](func::CallOp call) {
      if (call.getCallee() == "zrt_declare_program")
        worldSize = getConstantIntValue(call.getOperand(2)).value_or(1);
    });
    for (StringRef name : {"zero_program_step", "zero_program_apply"})
      if (auto func = module.lookupSymbol<func::FuncOp>(name))
        if (failed(plan(func, worldSize)))
          return signalPassFailure();
  }

  int64_t aligned(int64_t bytes) const {
    return (bytes + alignment - 1) / alignment * alignment;
  }

  /// The buffers of `func` with their live intervals.
  FailureOr<SmallVector<PlannedBuffer>> collect(func::FuncOp func,
                                                int64_t worldSize) {
    SmallVector<PlannedBuffer> buffers;
    DenseMap<Value, size_t> byPointer, byHandle;
    unsigned position = 0;
    WalkResult result = func.walk([&](func::CallOp call) {
      ++position;
      auto arg = [&](unsigned i) { return getConstantIntValue(call.getOperand(i)); };
      StringRef callee = call.getCallee();
      if (callee == "zrt_alloc") {
        std::optional<int64_t> size = arg(1), category = arg(2);
        if (!size || !category) {
          call.emitOpError() << getArgument()
                             << ": expected a constant size and category "
                                "(run canonicalize first)";
          return WalkResult::interrupt();
        }
        byPointer[call.getResult(0)] = buffers.size();
        buffers.push_back({int32_t(*category), *size, position, ~0u, call,
                           /*staging=*/false});
      } else if (callee == "zrt_free") {
        auto it = byPointer.find(call.getOperand(1));
        if (it != byPointer.end())
          buffers[it->second].end = position;
      } else if (callee == "zrt_wait") {
        auto it = byHandle.find(call.getOperand(1));
        if (it != byHandle.end())
          buffers[it->second].end = position;
      } else if (std::optional<CollectiveCall> collective =
                     readCollectiveCall(call, worldSize)) {
        // A padded collective stages the padded tensor from its start to
        // its wait.
        if (!collective->stagingBytes)
          return WalkResult::advance();
        if (collective->async)
          byHandle[call.getResult(0)] = buffers.size();
        buffers.push_back({ZRT_MEM_COMM, collective->stagingBytes, position,
                           collective->async ? ~0u : position, call,
                           /*staging=*/true});
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    for (PlannedBuffer &buffer : buffers)
      buffer.end = std::min(buffer.end, position);
    return buffers;
  }

  LogicalResult plan(func::FuncOp func, int64_t worldSize) {
    FailureOr<SmallVector<PlannedBuffer>> collected = collect(func, worldSize);
    if (failed(collected))
      return failure();
    SmallVector<PlannedBuffer> &buffers = *collected;
    SmallVector<PlannedBuffer *> order;
    for (PlannedBuffer &buffer : buffers)
      order.push_back(&buffer);
    llvm::stable_sort(order, [](PlannedBuffer *a, PlannedBuffer *b) {
      return a->bytes > b->bytes;
    });
    SmallVector<int64_t> arenaBytes(ZRT_MEM_NUM_CATEGORIES, 0);
    SmallVector<SmallVector<PlannedBuffer *>> placed(ZRT_MEM_NUM_CATEGORIES);
    for (PlannedBuffer *buffer : order) {
      // The buffers already placed that are live at the same time, by
      // offset; take the lowest gap that holds this one.
      SmallVector<PlannedBuffer *> conflicts;
      for (PlannedBuffer *other : placed[buffer->category])
        if (other->start <= buffer->end && buffer->start <= other->end)
          conflicts.push_back(other);
      llvm::sort(conflicts, [](PlannedBuffer *a, PlannedBuffer *b) {
        return a->offset < b->offset;
      });
      int64_t offset = 0, size = aligned(buffer->bytes);
      for (PlannedBuffer *other : conflicts) {
        if (offset + size <= other->offset)
          break;
        offset = std::max(offset, other->offset + aligned(other->bytes));
      }
      buffer->offset = offset;
      placed[buffer->category].push_back(buffer);
      arenaBytes[buffer->category] =
          std::max(arenaBytes[buffer->category], offset + size);
    }
    Builder b(func.getContext());
    for (PlannedBuffer &buffer : buffers)
      buffer.alloc->setAttr(buffer.staging ? "zero.staging_offset"
                                           : "zero.arena_offset",
                            b.getI64IntegerAttr(buffer.offset));
    func->setAttr("zero.arena_bytes", b.getDenseI64ArrayAttr(arenaBytes));
    return success();
  }
};

} // namespace
