//===- CallEmitter.h - calls of zrt.h, checked against zrt.h ---*- C++ -*-===//
//
// How zero-lower-zrt-to-calls writes a call: ZRT_CALL(zrt_foo, args...)
// takes the type of zrt_foo from include/zero/zrt.h and static_asserts that
// the arguments are as many, and of the kinds, its parameters want (a buffer
// or other pointer, int64_t, int32_t, float), each kind a wrapper type so
// that none converts into another silently. So a call that disagrees with
// zrt.h does not compile (test/Passes/zrt-calls-prototypes.test).
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_PASSES_CONVERSION_ZRTTOCALLS_CALLEMITTER_H
#define ZERO_PASSES_CONVERSION_ZRTTOCALLS_CALLEMITTER_H

#include "dialects/zrt/ZrtDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/zrt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include <string>

#include <optional>
#include <type_traits>

namespace zero {

/// The untyped layer: declares each zrt_* function on first use with the
/// types of its arguments, and builds the constants the calls take.
class RuntimeCalls {
public:
  /// Reuses the string constants `module` already holds (those of the
  /// functions lowered before).
  RuntimeCalls(mlir::ModuleOp module, mlir::OpBuilder &builder);

  /// Calls `@name(args...)`, declaring it privately if needed. A declaration
  /// that disagrees with these types is an internal error (the pass refuses
  /// input that declares zrt_* names itself).
  mlir::func::CallOp call(mlir::Location loc, llvm::StringRef name,
                          mlir::ValueRange args, mlir::TypeRange results = {});

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

namespace zero::zrt_calls {
using llvm::ArrayRef;
using llvm::DenseMap;
using llvm::SmallVector;
using llvm::StringRef;
using mlir::APFloat;
using mlir::Location;
using mlir::ModuleOp;
using mlir::OpBuilder;
using mlir::Type;
using mlir::Value;

/// The kinds of C argument a call passes besides pointers (mlir::Value):
/// wrapped, so that none converts into another silently.
struct I64 {
  int64_t value;
};
struct I32 {
  int32_t value;
};
struct F32 {
  float value;
};
/// The int64_t handle of a started collective.
struct Handle {
  Value value;
};
/// A NUL-terminated string constant, for a `const char *`.
struct Str {
  StringRef value;
};
/// A constant table of floats, for a `const float *`.
struct Table {
  StringRef prefix;
  ArrayRef<float> values;
};
/// A buffer's pointer advanced by `bytes`.
struct Offset {
  Value base;
  int64_t bytes;
};
/// NULL, for an optional pointer.
struct Null {};

/// Whether an argument of kind `Arg` may be passed as C parameter `Param`.
/// Inline: the explicit specializations are definitions in every file that
/// includes this header, which clang's linker refuses as duplicates.
template <typename Param, typename Arg>
inline constexpr bool kPassesAs =
    std::is_pointer_v<Param> &&std::is_same_v<Arg, Value>;
template <> inline constexpr bool kPassesAs<int64_t, I64> = true;
template <> inline constexpr bool kPassesAs<int32_t, I32> = true;
template <> inline constexpr bool kPassesAs<float, F32> = true;
template <> inline constexpr bool kPassesAs<int64_t, Handle> = true;
template <> inline constexpr bool kPassesAs<const char *, Str> = true;
template <> inline constexpr bool kPassesAs<const float *, Table> = true;
template <typename Pointee>
inline constexpr bool kPassesAs<Pointee *, Offset> = true;
template <typename Pointee>
inline constexpr bool kPassesAs<Pointee *, Null> = true;

template <typename Fn> struct Prototype;
/// A zrt_* function: the context, then its parameters.
template <typename R, typename... Params>
struct Prototype<R(zrt_context *, Params...)> {
  using Result = R;
  template <typename... Args> static constexpr bool accepts() {
    if constexpr (sizeof...(Params) != sizeof...(Args))
      return false;
    else
      return (kPassesAs<Params, Args> && ...);
  }
};

class CallEmitter {
public:
  CallEmitter(ModuleOp module, OpBuilder &b, Value ctx)
      : rt(module, b), b(b), ctx(ctx) {}

  /// Calls `name` of prototype `Fn` with `args` after the context.
  template <typename Fn, typename... Args>
  Value call(Location loc, StringRef name, Args... args) {
    using Proto = Prototype<Fn>;
    static_assert(Proto::template accepts<Args...>(),
                  "a zrt call disagrees with its prototype in zrt.h");
    SmallVector<Value> operands{ctx};
    (operands.push_back(materialize(loc, args)), ...);
    SmallVector<Type> results;
    if constexpr (std::is_same_v<typename Proto::Result, int64_t>)
      results.push_back(b.getI64Type());
    else if constexpr (std::is_pointer_v<typename Proto::Result>)
      results.push_back(rt.ptrType());
    mlir::func::CallOp call = rt.call(loc, name, operands, results);
    return results.empty() ? Value() : call.getResult(0);
  }

  RuntimeCalls rt;
  OpBuilder &b;
  Value ctx;
  /// The pointer (or handle) of each buffer (or started collective).
  DenseMap<Value, Value> lowered;

  Value ptr(Value buffer) { return lowered.lookup(buffer); }

private:
  Value materialize(Location, Value v) { return v; }
  Value materialize(Location loc, I64 v) { return rt.i64(loc, v.value); }
  Value materialize(Location loc, I32 v) { return rt.i32(loc, v.value); }
  Value materialize(Location loc, F32 v) { return rt.f32(loc, v.value); }
  Value materialize(Location, Handle v) { return v.value; }
  Value materialize(Location loc, Str v) { return rt.string(loc, v.value); }
  Value materialize(Location loc, Table v) {
    return rt.floatTable(loc, v.prefix, v.values);
  }
  Value materialize(Location loc, Offset v) {
    return rt.offsetPtr(loc, v.base, v.bytes);
  }
  Value materialize(Location loc, Null) { return rt.nullPtr(loc); }
};

// `, ##__VA_ARGS__` (GCC and Clang) drops the comma of an entry that
// takes the context alone.
#define ZRT_CALL(fn, ...)                                                      \
  emit.call<decltype(fn)>(op->getLoc(), #fn, ##__VA_ARGS__)

inline I64 numel(Value buffer) { return {zrt::getNumElements(buffer)}; }
inline I32 dtype(Value buffer) { return {zrt::getDType(buffer)}; }
inline I64 dim(Value buffer, unsigned d) {
  return {mlir::cast<mlir::MemRefType>(buffer.getType()).getShape()[d]};
}
inline F32 f32(APFloat value) { return {value.convertToFloat()}; }
inline I32 flag(bool value) { return {value}; }

/// The call of a zrt kernel op (ZrtKernelCalls.cpp); std::nullopt when `op`
/// is no kernel.
std::optional<mlir::LogicalResult> lowerKernelCall(CallEmitter &emit,
                                                   mlir::Operation *op);

} // namespace zero::zrt_calls

#endif // ZERO_PASSES_CONVERSION_ZRTTOCALLS_CALLEMITTER_H
