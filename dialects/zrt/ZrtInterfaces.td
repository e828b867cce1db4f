//===- ZrtInterfaces.td - interfaces of the zrt dialect ----*- tablegen -*-===//
#ifndef ZERO_ZRT_INTERFACES
#define ZERO_ZRT_INTERFACES

include "mlir/IR/OpBase.td"

def Zrt_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::zero::zrt";
  let description = [{
    A collective over the data-parallel group, blocking or started
    asynchronously. It answers what the runtime's ledger will count for it,
    with the one traffic formula of zrt.h (`zrt_traffic_elements`), so that
    `zero-report` and `zero-plan-memory` need no rule of their own.
  }];
  let methods = [
    InterfaceMethod<"The collective's kind.", "::zrt_collective",
                    "getCollectiveKind">,
    InterfaceMethod<"Elements of the whole tensor (N).", "int64_t",
                    "getWholeElements">,
    InterfaceMethod<"Elements of one rank's shard (S; N for an all-reduce).",
                    "int64_t", "getShardElements">,
    InterfaceMethod<"The buffer the collective reads.", "::mlir::Value",
                    "getInput">,
    InterfaceMethod<"The buffer the collective writes.", "::mlir::Value",
                    "getOutput">,
    InterfaceMethod<"The tensor or bucket it moves, when named.",
                    "::std::optional<::llvm::StringRef>", "getLabel">,
    InterfaceMethod<"The ranks it runs over.", "::zero::zrt::Group",
                    "getGroup">,
  ];
  let extraSharedClassDeclaration = [{
    /// Whether it was started (its result is the handle zrt.wait takes).
    bool isAsync() { return $_op->getNumResults() == 1; }
    /// Bytes of one element of the tensor it moves.
    int64_t getElementBytes() {
      return ::zero::zrt::getElementBytes($_op.getInput());
    }
    /// Bytes this rank is charged for it when its group has `worldSize`
    /// ranks.
    int64_t getTrafficBytes(int64_t worldSize) {
      return ::zrt_traffic_elements($_op.getCollectiveKind(),
                                    $_op.getWholeElements(),
                                    $_op.getShardElements(), worldSize) *
             getElementBytes();
    }
    /// The staging copy of the padded tensor (W * S elements) that an
    /// all-gather or reduce-scatter of a tensor that does not split evenly
    /// holds as comm memory from its start to its wait; 0 when none.
    int64_t getStagingBytes(int64_t worldSize) {
      if (!::zero::zrt::getCollectiveInfo($_op.getCollectiveKind())
               .sharded() ||
          worldSize <= 1)
        return 0;
      int64_t padded = $_op.getShardElements() * worldSize;
      return $_op.getWholeElements() < padded ? padded * getElementBytes() : 0;
    }
  }];
}

def Zrt_KernelOpInterface : OpInterface<"KernelOpInterface"> {
  let cppNamespace = "::zero::zrt";
  let description = [{
    A kernel of `include/zero/zrt_kernels.def`, as the time model sees it:
    its floating-point operations (zrt.h's formulas, which the runtime's
    `--calibrate` counts too) and the bytes it streams through memory. What
    it reads and writes is declared per operand (`Zrt_In`, `Zrt_Out`,
    `Zrt_InOut`: MemoryEffectOpInterface); the zrt_* call it lowers to is its
    ZRT_CALL in `passes/Conversion/ZrtToCalls/Kernels.cpp`.
  }];
  let methods = [
    InterfaceMethod<[{
        Floating-point operations of one call: the products (GEMMs,
        attention's) only; an elementwise kernel is bound by its bytes.
      }],
      "int64_t", "getFlops", (ins), "", [{ return 0; }]>,
    InterfaceMethod<[{
        Bytes the call streams through memory: each buffer operand once.
      }],
      "int64_t", "getStreamedBytes", (ins), "", [{
        int64_t bytes = 0;
        for (::mlir::Value operand : $_op->getOperands())
          if (::llvm::isa<::mlir::MemRefType>(operand.getType()))
            bytes += ::zero::zrt::getByteSize(operand);
        return bytes;
      }]>,
  ];
}

// A kernel whose FLOPs follow a formula of its own (getFlops in ZrtOps.cpp).
def Zrt_KernelWithFlops
    : DeclareOpInterfaceMethods<Zrt_KernelOpInterface, ["getFlops"]>;

#endif // ZERO_ZRT_INTERFACES
