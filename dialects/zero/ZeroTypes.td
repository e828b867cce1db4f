//===- ZeroTypes.td - types of the zero dialect ------------*- tablegen -*-===//
#ifndef ZERO_ZERO_TYPES
#define ZERO_ZERO_TYPES

include "mlir/IR/AttrTypeBase.td"
include "dialects/zero/ZeroDialect.td"

def Zero_FutureType : TypeDef<Zero_Dialect, "Future"> {
  let mnemonic = "future";
  let summary = "a collective in flight and the tensor it will produce";
  let description = [{
    What an asynchronous collective returns when it starts: the handle of
    the transfer, typed by the tensor that `zero.wait` yields when it is
    complete. The tensor cannot be read before the wait, because only the
    wait produces it.

    ```mlir
    %f = zero.all_gather_start %w_shard over "dp"(4) : tensor<95xf32> -> !zero.future<tensor<19x20xf32>>
    %w = zero.wait %f : !zero.future<tensor<19x20xf32>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$valueType);
  let assemblyFormat = "`<` $valueType `>`";
}

#endif // ZERO_ZERO_TYPES
