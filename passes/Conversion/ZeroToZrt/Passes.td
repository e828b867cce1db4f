//===- ZeroToZrt/Passes.td - the conversion zero -> zrt ---*- tablegen -*-===//
//
// The conversion from the training program on tensors (nn, zero) to the zrt
// program on buffers.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_CONVERSION_ZEROTOZRT_PASSES
#define ZERO_CONVERSION_ZEROTOZRT_PASSES

include "mlir/Pass/PassBase.td"

def LowerZeroToZrt : Pass<"zero-lower-to-zrt", "::mlir::ModuleOp"> {
  let summary = "Lowers @train_step on tensors to the zrt program on buffers";
  let description = [{
    Input: `@train_step` on tensors, with placements and collectives, and
    `@train_apply` when gradients are accumulated.
    Output: the zrt program (the `zrt` dialect): `@zero_program_describe`,
    whose `zrt.declare_*` ops declare the program (with the world size and
    stage of the `zero.group`, which goes away) and each argument to the
    runtime, and `@zero_program_step`, whose arguments are the buffers of
    `@train_step`'s plus the loss output (`zrt.loss`), and in which every
    tensor is a buffer (a `memref` of its shape) and every op a `zrt` op.
    Every temporary is a `zrt.alloc` of its ledger category right before its
    producer and a `zrt.free` right after its last use (a gathered copy at
    its `zero.release`). Results marked `zero.updates` are written into their
    argument's buffer, in place when the producing op allows it.
    `@train_apply` becomes `@zero_program_apply`. Each function is one
    dialect conversion (tensors to memrefs, futures to `!zrt.handle`), whose
    patterns take their result buffers from a buffer assignment computed
    from the tensor function's liveness first.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::zero::zrt::ZrtDialect"];
}

#endif // ZERO_CONVERSION_ZEROTOZRT_PASSES
