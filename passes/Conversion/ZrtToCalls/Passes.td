//===- ZrtToCalls/Passes.td - the conversion zrt -> calls -*- tablegen -*-===//
//
// The conversion from the zrt program to calls of zrt.h's functions (func
// and llvm dialects).
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_CONVERSION_ZRTTOCALLS_PASSES
#define ZERO_CONVERSION_ZRTTOCALLS_PASSES

include "mlir/Pass/PassBase.td"

def LowerZrtToCalls : Pass<"zero-lower-zrt-to-calls", "::mlir::ModuleOp"> {
  let summary = "Turns every zrt op into the call of its zrt_* function";
  let description = [{
    Input: the zrt program. Output: the functions a program exports
    (include/zero/zrt.h): `@zero_program_describe(%ctx)`,
    `@zero_program_step(%ctx, %args, %loss)` and
    `@zero_program_apply(%ctx, %args)`, in which every buffer is an
    `!llvm.ptr` (an argument's loaded from `%args`) and every zrt op the
    `func.call` of its `zrt_*` function, with the sizes and dtypes the
    buffers' types give. Mechanical: one call per op, in order; each call is
    checked against its C prototype when the compiler is built.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // ZERO_CONVERSION_ZRTTOCALLS_PASSES
