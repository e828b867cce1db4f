//===- PlanMemory.cpp - offsets in per-rank arenas from liveness ----------===//
//
// In the zrt program every temporary is a zrt.alloc of a static size and a
// category, freed after its last use, and every padded collective holds a
// staging copy from its start to its wait. That is all a static
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
// One arena per category cannot lend a range that one category frees to
// another, although the backward frees activations exactly as it makes
// gradients. So the pass plans twice, per category and with one arena for
// every category, and binds the smaller (on GPT-2 at stage 3 the shared one
// is about a third smaller); the report shows both.
//
// The plan binds: each arena becomes a zrt.declare_arena of the
// description (or the one zrt.declare_shared_arena), and the runtime
// reserves one block per arena and places each zrt.alloc at its offset
// (zrt_alloc_in_arena). The staging copies of padded
// collectives are the runtime's own; they are planned apart (`zrt.staging_
// bytes`), so that the report can state them, and not reserved. Host
// buffers (--offload=optimizer's staging) are planned too, in an arena of
// their own category in host memory, whichever plan binds for the device:
// the runtime reserves it once (pinned, on a GPU) instead of allocating
// host memory for every copy of every step.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"
#include "passes/Utils/PassUtils.h"
#include "zero/zrt.h"

namespace zero {
#define GEN_PASS_DEF_PLANMEMORY
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// One buffer of a zrt function: a zrt.alloc, or the staging copy of a
/// padded collective (then `op` is the collective).
struct PlannedBuffer {
  int32_t category;
  int64_t bytes;
  unsigned start, end; // op positions, inclusive
  Operation *op;
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
                         << ": expected the zrt program (run "
                            "zero-lower-to-zrt first)";
      return signalPassFailure();
    }
    zrt::GroupSizes groups = zrt::GroupSizes::declaredIn(describe);
    // The step, the apply function and the validation step never run at
    // once: they share their arenas, each of the largest of their plans.
    SmallVector<func::FuncOp> bodies;
    for (StringRef name :
         {"zero_program_step", "zero_program_apply", "zero_program_eval"})
      if (auto func = module.lookupSymbol<func::FuncOp>(name))
        bodies.push_back(func);
    int64_t sharedBytes = 0;
    for (func::FuncOp func : bodies)
      sharedBytes = std::max(sharedBytes, plan(func, groups, /*shared=*/true));
    // Planned last, so that the offsets of the per-category plan stay on
    // the allocs unless the shared one binds.
    SmallVector<int64_t> arenaBytes(ZRT_MEM_NUM_CATEGORIES, 0);
    for (func::FuncOp func : bodies) {
      plan(func, groups, /*shared=*/false);
      auto planned =
          func->getAttrOfType<DenseI64ArrayAttr>(zrt::kArenaBytesAttrName);
      for (int c = 0; c < ZRT_MEM_NUM_CATEGORIES; ++c)
        arenaBytes[c] = std::max(arenaBytes[c], planned[c]);
    }
    // The host arenas are the same in both plans (their buffers are
    // placed among themselves either way).
    bool shared = shareArenas && sharedBytes < devicePart(arenaBytes);
    if (shared)
      for (func::FuncOp func : bodies)
        plan(func, groups, /*shared=*/true);
    declareArenas(describe, arenaBytes, shared ? sharedBytes : 0);
  }

  /// The bytes of the device's arenas among `arenaBytes`.
  static int64_t devicePart(ArrayRef<int64_t> arenaBytes) {
    int64_t bytes = 0;
    for (auto [category, size] : llvm::enumerate(arenaBytes))
      if (!zrt_mem_category_is_host(int32_t(category)))
        bytes += size;
    return bytes;
  }

  /// The description's arenas, at its end (replacing those of an earlier
  /// plan): the shared one when `sharedBytes` is positive, else one
  /// zrt.declare_arena per device category with temporaries; and one per
  /// host category with temporaries in both cases.
  static void declareArenas(func::FuncOp describe, ArrayRef<int64_t> arenaBytes,
                            int64_t sharedBytes) {
    describe.walk([](Operation *op) {
      if (isa<zrt::DeclareArenaOp, zrt::DeclareSharedArenaOp>(op))
        op->erase();
    });
    OpBuilder b(describe.getBody().front().getTerminator());
    if (sharedBytes > 0)
      zrt::DeclareSharedArenaOp::create(b, describe.getLoc(), sharedBytes);
    for (auto [category, bytes] : llvm::enumerate(arenaBytes))
      if (bytes > 0 &&
          (sharedBytes == 0 || zrt_mem_category_is_host(int32_t(category))))
        zrt::DeclareArenaOp::create(b, describe.getLoc(),
                                    static_cast<zrt::MemCategory>(category),
                                    bytes);
  }

  /// The range a buffer of `bytes` takes: aligned, and never empty, so
  /// that no two live buffers share an address.
  int64_t slot(int64_t bytes) const {
    return std::max<int64_t>(alignment,
                             (bytes + alignment - 1) / alignment * alignment);
  }

  /// The buffers of `func` with their live intervals.
  SmallVector<PlannedBuffer> collect(func::FuncOp func,
                                     const zrt::GroupSizes &groups) {
    SmallVector<PlannedBuffer> buffers;
    DenseMap<Operation *, size_t> byAlloc;
    DenseMap<Value, size_t> byHandle;
    unsigned position = 0;
    for (Operation &op : func.getBody().front()) {
      ++position;
      if (auto alloc = dyn_cast<zrt::AllocOp>(op)) {
        byAlloc[alloc] = buffers.size();
        buffers.push_back({int32_t(alloc.getCategory()), alloc.getByteSize(),
                           position, ~0u, alloc, /*staging=*/false});
      } else if (auto free = dyn_cast<zrt::FreeOp>(op)) {
        auto it = byAlloc.find(zrt::getAllocation(free.getBuffer()));
        if (it != byAlloc.end())
          buffers[it->second].end = position;
      } else if (auto wait = dyn_cast<zrt::WaitOp>(op)) {
        auto it = byHandle.find(wait.getHandle());
        if (it != byHandle.end())
          buffers[it->second].end = position;
      } else if (auto collective = dyn_cast<zrt::CollectiveOpInterface>(op)) {
        // A padded collective stages the padded tensor from its start to
        // its wait.
        int64_t staging = collective.getStagingBytes(groups.sizeOf(collective));
        if (!staging)
          continue;
        if (collective.isAsync())
          byHandle[op.getResult(0)] = buffers.size();
        buffers.push_back({ZRT_MEM_COMM, staging, position,
                           collective.isAsync() ? ~0u : position, &op,
                           /*staging=*/true});
      }
    }
    for (PlannedBuffer &buffer : buffers)
      buffer.end = std::min(buffer.end, position);
    return buffers;
  }

  /// Places the buffers of `func`, in one arena per category or, when
  /// `shared`, in one arena for all; writes the offsets on its ops and the
  /// plan's arena bytes on `func` (zrt.arena_bytes or
  /// zrt.shared_arena_bytes); returns the bytes of all its arenas together.
  int64_t plan(func::FuncOp func, const zrt::GroupSizes &groups, bool shared) {
    SmallVector<PlannedBuffer> buffers = collect(func, groups);
    SmallVector<PlannedBuffer *> order;
    for (PlannedBuffer &buffer : buffers)
      order.push_back(&buffer);
    llvm::stable_sort(order, [](PlannedBuffer *a, PlannedBuffer *b) {
      return a->bytes > b->bytes;
    });
    // One region per category (or one for all), and one more for the
    // staging copies of padded collectives, which the runtime allocates
    // itself.
    constexpr int kStaging = ZRT_MEM_NUM_CATEGORIES;
    SmallVector<int64_t> arenaBytes(kStaging + 1, 0);
    SmallVector<SmallVector<PlannedBuffer *>> placed(kStaging + 1);
    for (PlannedBuffer *buffer : order) {
      // Host memory is never shared with the device's.
      bool host = zrt_mem_category_is_host(buffer->category);
      int region = buffer->staging   ? kStaging
                   : shared && !host ? 0
                                     : buffer->category;
      // The buffers already placed that are live at the same time, by
      // offset; take the lowest gap that holds this one.
      SmallVector<PlannedBuffer *> conflicts;
      for (PlannedBuffer *other : placed[region])
        if (other->start <= buffer->end && buffer->start <= other->end)
          conflicts.push_back(other);
      llvm::sort(conflicts, [](PlannedBuffer *a, PlannedBuffer *b) {
        return a->offset < b->offset;
      });
      int64_t offset = 0, size = slot(buffer->bytes);
      for (PlannedBuffer *other : conflicts) {
        if (offset + size <= other->offset)
          break;
        offset = std::max(offset, other->offset + slot(other->bytes));
      }
      buffer->offset = offset;
      placed[region].push_back(buffer);
      arenaBytes[region] = std::max(arenaBytes[region], offset + size);
    }
    Builder b(func.getContext());
    for (PlannedBuffer &buffer : buffers)
      buffer.op->setAttr(buffer.staging ? "staging_offset" : "arena_offset",
                         b.getI64IntegerAttr(buffer.offset));
    arenaBytes.pop_back();
    if (shared)
      func->setAttr(zrt::kSharedArenaBytesAttrName,
                    b.getI64IntegerAttr(arenaBytes[0]));
    else
      func->setAttr(zrt::kArenaBytesAttrName,
                    b.getDenseI64ArrayAttr(arenaBytes));
    func->setAttr(zrt::kStagingBytesAttrName,
                  b.getI64IntegerAttr(placedStaging(buffers)));
    // The device's bytes: the shared plan's region 0, or every device
    // category's.
    return shared ? arenaBytes[0] : devicePart(arenaBytes);
  }

  /// The bytes the staging copies need at most at once, as placed.
  int64_t placedStaging(ArrayRef<PlannedBuffer> buffers) const {
    int64_t bytes = 0;
    for (const PlannedBuffer &buffer : buffers)
      if (buffer.staging)
        bytes = std::max(bytes, buffer.offset + slot(buffer.bytes));
    return bytes;
  }
};

} // namespace
