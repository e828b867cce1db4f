//===- ZeroInterfaces.td - interfaces of the zero dialect --*- tablegen -*-===//
#ifndef ZERO_ZERO_INTERFACES
#define ZERO_ZERO_INTERFACES

include "mlir/IR/OpBase.td"

def Zero_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let description = [{
    What every collective over the data-parallel group has in common, so that
    the report and the scheduler can ask one question of any of them.
  }];
  let cppNamespace = "::zero::sharding";
  let methods = [
    InterfaceMethod<"The name of the process group.", "::llvm::StringRef",
      "getGroupName", (ins), [{ return $_op.getGroup(); }]>,
    InterfaceMethod<"The number of ranks in the group.", "int64_t",
      "getNumRanks", (ins),
      [{ return static_cast<int64_t>($_op.getWorldSize()); }]>,
    InterfaceMethod<[{
        The elements that one rank is charged for this collective in the ZeRO
        paper's accounting, by the formula the runtime's ledger and
        `--report` use (`zrt_traffic_elements` in zrt.h): W * ceil(N / W),
        the padded tensor, for an all-gather or a reduce-scatter of an
        N-element tensor over W ranks; 2N for an all-reduce.
      }], "int64_t", "getTrafficElements">,
  ];
}

#endif // ZERO_ZERO_INTERFACES
