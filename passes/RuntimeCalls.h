//===- RuntimeCalls.h - emitting calls of the libzrt C ABI ------*- C++ -*-===//
//
// What zero-lower-zrt-to-calls builds calls of include/zero/zrt.h with:
// declares each zrt_* function on first use with the types of its
// arguments, and builds the constants the calls take.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_PASSES_RUNTIMECALLS_H
#define ZERO_PASSES_RUNTIMECALLS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/zrt.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace zero {

class RuntimeCalls {
public:
  /// Reuses the string constants `module` already holds (those of the
  /// functions lowered before).
  RuntimeCalls(mlir::ModuleOp module, mlir::OpBuilder &builder);

  /// Calls `@name(args...)`, declaring it privately if needed. A declaration
  /// that disagrees with these types is an internal error (the pass refuses
  /// input that declares zrt_* names itself).
  mlir::func::CallOp call(mlir::Location loc, llvm::StringRef name,
                          mlir::ValueRange args,
                          mlir::TypeRange results = {});

  mlir::Value i32(mlir::Location loc, int64_t value);
  mlir::Value i64(mlir::Location loc, int64_t value);
  mlir::Value f32(mlir::Location loc, float value);
  /// The address of a private, NUL-terminated string constant (one global
  /// per distinct string).
  mlir::Value string(mlir::Location loc, llvm::StringRef value);
  /// The address of a private constant array of float32 values (one global
  /// per distinct table: the ropes of every layer share theirs).
  mlir::Value floatTable(mlir::Location loc, llvm::StringRef prefix,
                         llvm::ArrayRef<float> values);
  mlir::Type ptrType();
  /// `base` advanced by `bytes` bytes.
  mlir::Value offsetPtr(mlir::Location loc, mlir::Value base, int64_t bytes);
  /// NULL, for an optional pointer argument.
  mlir::Value nullPtr(mlir::Location loc);
  mlir::Type i64Type() { return b.getI64Type(); }

private:
  mlir::ModuleOp module;
  mlir::OpBuilder &b;
  int64_t numStrings = 0;
  llvm::DenseMap<mlir::Attribute, std::string> floatTables;
  /// The global of each distinct string (collective labels repeat, in
  /// every function).
  llvm::StringMap<std::string> strings;
};

} // namespace zero

#endif // ZERO_PASSES_RUNTIMECALLS_H
