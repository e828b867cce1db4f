//===- OverlapOffload.cpp - the host update off the critical path ---------===//
//
// ZeRO-Offload runs AdamW on the host's CPU; zero-offload-optimizer made
// each update a few host calls at the end of the step (the update, the
// cast of a bf16 parameter's new master, the copy of the new parameter up
// to the device), and the device waited for them. This pass makes each
// parameter's update a host task that the runtime runs on a host thread
// while the step goes on and the next one starts (core/host_tasks.h):
//
//   zrt.host_task_begin
//   zrt.adamw %p, %g, %m, %v -> %p, %m, %v ... on_host
//   zrt.copy_to_device %p to %arg3 : memref<8192xf32>
//   zrt.host_task_end writes %arg3 : memref<8192xf32>
//
// and makes the device wait for it only where it next reads what the task
// writes: `zrt.host_wait %arg3` before the parameter's first use in the
// function (the next step's forward at stage 0, its gather at stage 3, the
// next micro-step's under accumulation), and before the first use after
// the task when the function reads it again itself (the gather of the new
// shard at stages 1-2). So every step still trains on the parameters of
// the step before, bit for bit as without the pass (ZeRO-Offload's delayed
// update, which would not, is not needed to overlap).
//
// The host buffers a task reads (the copies of the gradient and of the
// hyperparameters, the new master's bf16 cast) must outlive it: their
// frees move to the end of the function, so the memory plan keeps them
// apart and the ledger charges them to the end. And the step's first copy
// into host memory, which may land where the previous step's tasks read,
// waits for every task first (`zrt.host_wait_all`).
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"

namespace zero {
#define GEN_PASS_DEF_OVERLAPOFFLOAD
#include "passes/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// One parameter's host update: its ops from the update to the upload,
/// and the allocations among them (the bf16 cast's host buffer, the
/// upload's destination at stages 1-2, whose new shard is gathered after).
struct HostTask {
  zrt::AdamWOp update;
  zrt::CopyToDeviceOp upload;
  SmallVector<zrt::AllocOp, 2> allocs;
};

/// The first op of `block` at or after `from` that uses `names` (not a
/// zrt.view), or null.
Operation *firstUseFrom(Block &block, Operation *from, ArrayRef<Value> names) {
  for (Operation *op = from; op; op = op->getNextNode()) {
    if (isa<zrt::ViewOp>(op))
      continue;
    for (Value operand : op->getOperands())
      if (llvm::is_contained(names, operand))
        return op;
  }
  return nullptr;
}

bool isHostBuffer(Value buffer) {
  zrt::AllocOp alloc = zrt::getAllocation(buffer);
  return alloc && zrt_mem_category_is_host(int32_t(alloc.getCategory()));
}

struct OverlapOffloadPass : zero::impl::OverlapOffloadBase<OverlapOffloadPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp, 2> funcs;
    for (StringRef name : {"zero_program_step", "zero_program_apply"})
      if (auto func = module.lookupSymbol<func::FuncOp>(name))
        funcs.push_back(func);
    // The argument positions the tasks write: the step and the apply
    // function take the same arguments, so a parameter the apply updates
    // is waited for where the next micro-step reads it too.
    llvm::SetVector<unsigned> writtenArgs;
    llvm::SmallPtrSet<Operation *, 16> uploads;
    for (func::FuncOp func : funcs)
      for (HostTask &task : makeTasks(func)) {
        uploads.insert(task.upload);
        if (auto arg = dyn_cast<BlockArgument>(task.upload.getDst()))
          writtenArgs.insert(arg.getArgNumber());
      }
    if (uploads.empty()) {
      module.emitError() << getArgument()
                         << ": the program has no zrt.adamw on_host to run "
                            "as a host task; compile with "
                            "--offload=optimizer";
      return signalPassFailure();
    }
    for (func::FuncOp func : funcs) {
      waitForArguments(func, writtenArgs.getArrayRef(), uploads);
      waitBeforeHostMemory(func);
    }
  }

  /// Finds `update`'s upload: after it, only frees, allocations and the
  /// host cast of its new parameter, then the zrt.copy_to_device of the new
  /// parameter (or of its cast). Anything else and the update stays as it
  /// is.
  std::optional<HostTask> taskOf(zrt::AdamWOp update) {
    Value newValue = update.getNewParam();
    SmallVector<zrt::AllocOp, 2> allocs;
    for (Operation *op = update->getNextNode(); op; op = op->getNextNode()) {
      if (isa<zrt::FreeOp>(op))
        continue;
      if (auto alloc = dyn_cast<zrt::AllocOp>(op)) {
        allocs.push_back(alloc);
        continue;
      }
      if (auto cast = dyn_cast<zrt::CastOp>(op);
          cast && cast.getOnHost() && cast.getSrc() == newValue) {
        newValue = cast.getDst();
        continue;
      }
      auto upload = dyn_cast<zrt::CopyToDeviceOp>(op);
      if (!upload || upload.getSrc() != newValue)
        return std::nullopt;
      return HostTask{update, upload, allocs};
    }
    return std::nullopt;
  }

  /// Brackets each host update of `func` as a task, moves the frees of the
  /// host buffers the tasks use to the end, and waits for a task before
  /// the first use after it of what it writes (in this function).
  SmallVector<HostTask> makeTasks(func::FuncOp func) {
    Block &body = func.getBody().front();
    SmallVector<HostTask> tasks;
    for (Operation &op : body)
      if (auto update = dyn_cast<zrt::AdamWOp>(op);
          update && update.getOnHost())
        if (std::optional<HostTask> task = taskOf(update))
          tasks.push_back(*task);
    if (tasks.empty())
      return tasks;

    // The host buffers the tasks read or write live to the end.
    llvm::SetVector<Value> taskHostBuffers;
    for (HostTask &task : tasks)
      for (Operation *op = task.update; op != task.upload->getNextNode();
           op = op->getNextNode())
        if (!isa<zrt::FreeOp>(op))
          for (Value operand : op->getOperands())
            if (isHostBuffer(operand))
              taskHostBuffers.insert(operand);
    Operation *terminator = body.getTerminator();
    SmallVector<zrt::FreeOp> moved;
    for (Operation &op : body)
      if (auto free = dyn_cast<zrt::FreeOp>(op);
          free && taskHostBuffers.contains(free.getBuffer()))
        moved.push_back(free);
    for (zrt::FreeOp free : moved)
      free->moveBefore(terminator);

    OpBuilder b(func.getContext());
    for (HostTask &task : tasks) {
      Location loc = task.update.getLoc();
      // The main thread allocates; the task only writes.
      for (zrt::AllocOp alloc : task.allocs)
        alloc->moveBefore(task.update);
      b.setInsertionPoint(task.update);
      zrt::HostTaskBeginOp::create(b, loc);
      Value written = task.upload.getDst();
      b.setInsertionPointAfter(task.upload);
      auto end = zrt::HostTaskEndOp::create(b, loc, written);
      // Read again after the task in this function (stages 1-2's gather).
      if (Operation *next = firstUseFrom(body, end->getNextNode(),
                                         zrt::getAliases(written))) {
        b.setInsertionPoint(next);
        zrt::HostWaitOp::create(b, loc, written);
      }
    }
    return tasks;
  }

  /// Waits for each argument a task writes before its first use in `func`
  /// (the next call's: the next step's forward or gather, the next
  /// micro-step's), unless that use is the task's own upload.
  void waitForArguments(func::FuncOp func, ArrayRef<unsigned> positions,
                        const llvm::SmallPtrSetImpl<Operation *> &uploads) {
    Block &body = func.getBody().front();
    OpBuilder b(func.getContext());
    for (unsigned position : positions) {
      if (position >= func.getNumArguments())
        continue;
      Value arg = func.getArgument(position);
      Operation *first =
          firstUseFrom(body, &body.front(), zrt::getAliases(arg));
      if (!first || uploads.contains(first))
        continue;
      b.setInsertionPoint(first);
      zrt::HostWaitOp::create(b, first->getLoc(), arg);
    }
  }

  /// The function's first host buffer (a copy of this step's gradient) may
  /// lie where the previous step's tasks still read: they finish first.
  void waitBeforeHostMemory(func::FuncOp func) {
    for (Operation &op : func.getBody().front())
      if (isa<zrt::CopyToHostOp>(op) ||
          (isa<zrt::AllocOp>(op) && isHostBuffer(op.getResult(0)))) {
        OpBuilder b(&op);
        zrt::HostWaitAllOp::create(b, op.getLoc());
        return;
      }
  }
};

} // namespace
