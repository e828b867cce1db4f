//===- ProgramDescription.h - @zero_program_describe ------------*- C++ -*-===//
//
// The half of zero-lower-to-runtime that tells the runtime what each
// argument of the step is: role, element type, whole shape, sharding and
// initialiser, and what the program trains on.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_PASSES_PROGRAMDESCRIPTION_H
#define ZERO_PASSES_PROGRAMDESCRIPTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace zero {

/// Emits `@zero_program_describe(%ctx)` for `trainStep` into its module.
mlir::LogicalResult emitProgramDescription(mlir::func::FuncOp trainStep,
                                           llvm::StringRef passName);

/// The zrt_dtype of a tensor's element type (int32 data reports f32: the
/// runtime knows those roles are int32).
int32_t runtimeDType(mlir::Type type);

} // namespace zero

#endif // ZERO_PASSES_PROGRAMDESCRIPTION_H
