//===- ProgramDescription.h - @zero_program_describe ------------*- C++ -*-===//
//
// The half of zero-lower-to-zrt that tells the runtime what each
// argument of the step is: role, element type, whole shape, sharding and
// initialiser, and what the program trains on.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_PASSES_CONVERSION_ZEROTOZRT_PROGRAMDESCRIPTION_H
#define ZERO_PASSES_CONVERSION_ZEROTOZRT_PROGRAMDESCRIPTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace zero {

/// Emits `@zero_program_describe`, zrt.declare_* ops, for `trainStep` into
/// its module.
mlir::LogicalResult emitProgramDescription(mlir::func::FuncOp trainStep,
                                           llvm::StringRef passName);

} // namespace zero

#endif // ZERO_PASSES_CONVERSION_ZEROTOZRT_PROGRAMDESCRIPTION_H
