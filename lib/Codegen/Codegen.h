//===- Codegen.h - LLVM IR, object files and executables --------*- C++ -*-===//
#ifndef ZERO_LIB_CODEGEN_CODEGEN_H
#define ZERO_LIB_CODEGEN_CODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace zero {

/// Registers the translations from the builtin and LLVM dialects to LLVM IR.
void registerCodegenTranslations(mlir::DialectRegistry &registry);

/// Writes `module` (in the LLVM dialect) as textual LLVM IR.
mlir::LogicalResult emitLLVMIR(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Compiles `module` for the host into an object file at `path`, in-process
/// through LLVM's TargetMachine.
mlir::LogicalResult emitObjectFile(mlir::ModuleOp module,
                                   llvm::StringRef path);

/// Links `objectPath` with libzrt into the executable `outputPath`.
/// `runtimeDir` holds libzrt.so and libzrt_main.a; empty means the default.
mlir::LogicalResult linkExecutable(mlir::Location loc,
                                   llvm::StringRef objectPath,
                                   llvm::StringRef outputPath,
                                   llvm::StringRef runtimeDir);

} // namespace zero

#endif // ZERO_LIB_CODEGEN_CODEGEN_H
