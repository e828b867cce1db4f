//===- ZrtToCalls.cpp - zrt ops to calls of the libzrt C ABI --------------===//
//
// The last step of the seam, and a mechanical one: every zrt op becomes the
// func.call of its zrt_* function (include/zero/zrt.h), every buffer an
// !llvm.ptr, and each zrt function the entry point a program exports:
// @zero_program_describe(%ctx), @zero_program_step(%ctx, %args, %loss),
// @zero_program_apply(%ctx, %args), the buffers of the arguments loaded
// from %args.
//
// Each call is checked against its C prototype when this file compiles
// (ZRT_CALL, ZrtCalls.h). This file holds the pass and the calls of the
// description, memory and collective ops; ZrtKernelCalls.cpp the kernels'.
//
//===----------------------------------------------------------------------===//
#include "dialects/zrt/ZrtDialect.h"
#include "passes/Conversion/ZrtToCalls/CallEmitter.h"
#include "passes/Conversion/ZrtToCalls/Passes.h"
#include "passes/Utils/PassUtils.h"

#include "llvm/ADT/TypeSwitch.h"

namespace zero {
#define GEN_PASS_DEF_LOWERZRTTOCALLS
#include "passes/Conversion/ZrtToCalls/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;
using namespace zero::zrt;

namespace {

using namespace zero::zrt_calls;

/// A collective's label, "" when it has none.
Str label(CollectiveOpInterface collective) {
  return Str{collective.getLabel().value_or("")};
}

/// The call of a collective: one case per line of the catalogue
/// (include/zero/zrt_collectives.def), its blocking or started entry point
/// with the arguments its shape gives, (group, dtype, input, output, N, S,
/// label) or, for a whole-buffer collective, (group, dtype, x, y, n,
/// label). A new collective of an existing shape needs nothing here. The
/// started form returns its handle.
Value lowerCollective(CallEmitter &emit, Operation *op,
                      CollectiveOpInterface c) {
  I32 group{int32_t(c.getGroup())};
  I32 type = dtype(c.getInput());
  Value input = emit.ptr(c.getInput()), output = emit.ptr(c.getOutput());
  I64 whole{c.getWholeElements()}, shard{c.getShardElements()};
  Str name = label(c);
#define ZRT_ARGS_Gather group, type, input, output, whole, shard, name
#define ZRT_ARGS_Scatter group, type, input, output, whole, shard, name
#define ZRT_ARGS_Whole group, type, input, output, whole, name
#define ZRT_COLLECTIVE(KIND, entry, Name, shape, ...)                          \
  case ZRT_##KIND:                                                             \
    if (c.isAsync())                                                           \
      return ZRT_CALL(zrt_##entry##_start, ZRT_ARGS_##shape);                  \
    return ZRT_CALL(zrt_##entry, ZRT_ARGS_##shape);
  switch (c.getCollectiveKind()) {
#include "zero/zrt_collectives.def"
  case ZRT_NUM_COLLECTIVES:
    break;
  }
#undef ZRT_COLLECTIVE
#undef ZRT_ARGS_Gather
#undef ZRT_ARGS_Scatter
#undef ZRT_ARGS_Whole
  llvm_unreachable("a collective kind outside the catalogue");
}

LogicalResult lowerOp(CallEmitter &emit, Operation *op) {
  auto p = [&](Value buffer) { return emit.ptr(buffer); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      // Program description.
      .Case([&](DeclareProgramOp d) {
        ZRT_CALL(zrt_declare_program, I64{ZRT_ABI_VERSION},
                 I64{int64_t(d.getWorldSize())}, I64{int64_t(d.getStage())},
                 I32{int32_t(d.getTask())}, I64{int64_t(d.getGlobalBatch())},
                 I64{int64_t(d.getSeqLen())}, I64{int64_t(d.getNumFeatures())},
                 I64{int64_t(d.getNumClasses())});
        return success();
      })
      .Case([&](DeclareShardGroupsOp d) {
        ZRT_CALL(zrt_declare_shard_groups, I64{int64_t(d.getSize())});
        return success();
      })
      .Case([&](DeclareMicroBatchesOp d) {
        ZRT_CALL(zrt_declare_micro_batches, I64{int64_t(d.getMicroBatches())});
        return success();
      })
      .Case([&](DeclareHfConfigOp d) {
        ZRT_CALL(zrt_declare_hf_config, Str{d.getJson()});
        return success();
      })
      .Case([&](DeclareArgOp d) {
        auto type = cast<RankedTensorType>(d.getType());
        I64 dims[4];
        for (int i = 0; i < 4; ++i)
          dims[i] = {i < type.getRank() ? type.getShape()[i] : 0};
        ZRT_CALL(zrt_declare_arg, I64{int64_t(d.getIndex())}, Str{d.getName()},
                 I32{int32_t(d.getRole())},
                 I32{getElementDType(type.getElementType())},
                 I32{int32_t(type.getRank())}, dims[0], dims[1], dims[2],
                 dims[3], flag(d.getSharded()), I32{int32_t(d.getInit())},
                 f32(d.getInitScale()));
        if (d.getHost())
          ZRT_CALL(zrt_declare_host_arg, I64{int64_t(d.getIndex())});
        return success();
      })
      .Case([&](DeclareDeterministicOp d) {
        ZRT_CALL(zrt_declare_deterministic, I64{int64_t(d.getChunkRows())});
        return success();
      })
      .Case([&](DeclareCollectivePlanOp d) {
        ZRT_CALL(zrt_declare_collective_plan, I64{int64_t(d.getSequence())},
                 I64{int64_t(d.getQueuedNs())}, I64{int64_t(d.getTransferNs())},
                 I64{int64_t(d.getExposedNs())});
        return success();
      })
      // Diagnostics.
      .Case([&](WatchGradientOp w) {
        ZRT_CALL(zrt_watch_gradient, p(w.getSumSquares()), Str{w.getParam()});
        return success();
      })
      // Memory.
      .Case([&](DeclareArenaOp arena) {
        ZRT_CALL(zrt_declare_arena, I32{int32_t(arena.getCategory())},
                 I64{int64_t(arena.getBytes())});
        return success();
      })
      .Case([&](DeclareSharedArenaOp arena) {
        ZRT_CALL(zrt_declare_arena, I32{ZRT_ARENA_SHARED},
                 I64{int64_t(arena.getBytes())});
        return success();
      })
      .Case([&](AllocOp alloc) {
        I64 bytes{alloc.getByteSize()};
        I32 category{int32_t(alloc.getCategory())};
        // A planned buffer at its place in the arena; else the allocator's.
        std::optional<uint64_t> offset = alloc.getArenaOffset();
        if (!offset)
          emit.lowered[alloc] = ZRT_CALL(zrt_alloc, bytes, category);
        else if (alloc.isZeroFilled())
          emit.lowered[alloc] = ZRT_CALL(zrt_alloc_in_arena, bytes, category,
                                         I64{int64_t(*offset)});
        else
          emit.lowered[alloc] = ZRT_CALL(zrt_alloc_in_arena_unfilled, bytes,
                                         category, I64{int64_t(*offset)});
        return success();
      })
      .Case([&](FreeOp free) {
        ZRT_CALL(zrt_free, p(free.getBuffer()));
        return success();
      })
      .Case([&](ViewOp view) {
        emit.lowered[view] = p(view.getSource());
        return success();
      })
      .Case([&](CopyOp copy) {
        ZRT_CALL(zrt_copy,
                 Offset{p(copy.getSrc()), int64_t(copy.getSrcOffset())},
                 Offset{p(copy.getDst()), int64_t(copy.getDstOffset())},
                 I64{int64_t(copy.getBytes())});
        return success();
      })
      .Case([&](FillOp fill) {
        ZRT_CALL(zrt_fill, dtype(fill.getDst()), p(fill.getDst()),
                 numel(fill.getDst()), f32(fill.getValue()));
        return success();
      })
      .Case([&](CastOp c) {
        if (c.getOnHost())
          ZRT_CALL(zrt_host_cast, dtype(c.getSrc()), dtype(c.getDst()),
                   p(c.getSrc()), p(c.getDst()), numel(c.getDst()));
        else
          ZRT_CALL(zrt_cast, dtype(c.getSrc()), dtype(c.getDst()),
                   p(c.getSrc()), p(c.getDst()), numel(c.getDst()));
        return success();
      })
      .Case([&](CopyToHostOp copy) {
        ZRT_CALL(zrt_copy_to_host, p(copy.getSrc()), p(copy.getDst()),
                 I64{zrt::getByteSize(copy.getDst())});
        return success();
      })
      .Case([&](CopyToDeviceOp copy) {
        ZRT_CALL(zrt_copy_to_device, p(copy.getSrc()), p(copy.getDst()),
                 I64{zrt::getByteSize(copy.getDst())});
        return success();
      })
      .Case([&](HostTaskBeginOp) {
        ZRT_CALL(zrt_host_task_begin);
        return success();
      })
      .Case([&](HostTaskEndOp end) {
        ZRT_CALL(zrt_host_task_end, p(end.getWrites()));
        return success();
      })
      .Case([&](HostWaitOp wait) {
        ZRT_CALL(zrt_host_wait, p(wait.getBuffer()));
        return success();
      })
      .Case([&](HostWaitAllOp) {
        ZRT_CALL(zrt_host_wait_all);
        return success();
      })
      .Case([&](ShardSliceOp s) {
        ZRT_CALL(zrt_shard_slice, dtype(s.getShard()), p(s.getFull()),
                 p(s.getShard()), numel(s.getFull()), numel(s.getShard()));
        return success();
      })
      .Case([&](CollectiveOpInterface c) {
        Value handle = lowerCollective(emit, op, c);
        if (c.isAsync())
          emit.lowered[op->getResult(0)] = handle;
        return success();
      })
      .Case([&](WaitOp w) {
        ZRT_CALL(zrt_wait, Handle{emit.lowered.lookup(w.getHandle())});
        return success();
      })
      .Default([&](Operation *) -> LogicalResult {
        if (std::optional<LogicalResult> kernel = lowerKernelCall(emit, op))
          return *kernel;
        return op->emitOpError("is no zrt op: zero-lower-zrt-to-calls "
                               "expects functions of zrt ops only");
      });
}

struct LowerZrtToCallsPass
    : zero::impl::LowerZrtToCallsBase<LowerZrtToCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The pass declares the runtime's zrt_* functions itself, with the types
    // of its calls; a symbol of such a name in the input would be called
    // with types it may not have.
    for (Operation &op : *module.getBody())
      if (auto symbol = dyn_cast<SymbolOpInterface>(op);
          symbol && symbol.getName().starts_with("zrt_")) {
        op.emitError() << getArgument() << ": @" << symbol.getName()
                       << " is named like a function of the runtime's C ABI, "
                          "which this pass declares; rename it";
        return signalPassFailure();
      }
    for (StringRef name : {"zero_program_describe", "zero_program_step",
                           "zero_program_apply", "zero_program_eval"})
      if (auto func = module.lookupSymbol<func::FuncOp>(name))
        if (failed(lowerFunction(func)))
          return signalPassFailure();
  }

  /// Replaces `func` (of buffer arguments, the last the loss when marked
  /// zrt.loss) by the exported function of pointers.
  LogicalResult lowerFunction(func::FuncOp func) {
    ModuleOp module = getOperation();
    OpBuilder b(func);
    Type ptr = LLVM::LLVMPointerType::get(&getContext());
    bool isDescribe = func.getName() == "zero_program_describe";
    unsigned numArgs = func.getNumArguments();
    bool withLoss =
        numArgs && func.getArgAttr(numArgs - 1, kLossAttrName) != nullptr;
    SmallVector<Type> types{ptr};
    if (!isDescribe)
      types.push_back(ptr);
    if (withLoss)
      types.push_back(ptr);
    auto entry = func::FuncOp::create(b, func.getLoc(),
                                      (func.getName() + ".lowered").str(),
                                      b.getFunctionType(types, {}));
    Block *block = entry.addEntryBlock();
    b.setInsertionPointToStart(block);
    CallEmitter emit(module, b, block->getArgument(0));
    for (BlockArgument arg : func.getArguments()) {
      if (withLoss && arg.getArgNumber() == numArgs - 1) {
        emit.lowered[arg] = block->getArgument(2);
        continue;
      }
      if (isDescribe)
        return func.emitOpError("the describe function takes no arguments");
      Value slot = LLVM::GEPOp::create(
          b, arg.getLoc(), ptr, ptr, block->getArgument(1),
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(arg.getArgNumber())});
      emit.lowered[arg] = LLVM::LoadOp::create(b, arg.getLoc(), ptr, slot);
    }
    for (Operation &op : func.getBody().front()) {
      if (isa<func::ReturnOp>(op))
        continue;
      if (failed(lowerOp(emit, &op)))
        return failure();
    }
    func::ReturnOp::create(b, func.getLoc());
    for (StringRef plan : {kArenaBytesAttrName, kSharedArenaBytesAttrName})
      if (Attribute bytes = func->getAttr(plan))
        entry->setAttr(plan, bytes);
    std::string name = func.getName().str();
    func.erase();
    entry.setName(name);
    return success();
  }
};
} // namespace
