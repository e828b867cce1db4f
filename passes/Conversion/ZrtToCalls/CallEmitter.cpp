//===- CallEmitter.cpp - emitting calls of the libzrt C ABI ---------------===//
#include "passes/Conversion/ZrtToCalls/CallEmitter.h"
#include "zero/zrt.h"

using namespace mlir;

namespace zero {

func::CallOp RuntimeCalls::call(Location loc, StringRef name, ValueRange args,
                                TypeRange results) {
  auto type = FunctionType::get(b.getContext(), args.getTypes(), results);
  auto callee = module.lookupSymbol<func::FuncOp>(name);
  if (!callee) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    callee = func::FuncOp::create(b, loc, name, type);
    callee.setPrivate();
  }
  assert(callee.getFunctionType() == type &&
         "one zrt_* function called with two signatures");
  return func::CallOp::create(b, loc, callee, args);
}

Value RuntimeCalls::i32(Location loc, int64_t value) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
}

Value RuntimeCalls::i64(Location loc, int64_t value) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
}

Value RuntimeCalls::f32(Location loc, float value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

Type RuntimeCalls::ptrType() {
  return LLVM::LLVMPointerType::get(b.getContext());
}

Value RuntimeCalls::offsetPtr(Location loc, Value base, int64_t bytes) {
  if (bytes == 0)
    return base;
  return LLVM::GEPOp::create(b, loc, ptrType(), b.getI8Type(), base,
                             ArrayRef<LLVM::GEPArg>{i64(loc, bytes)});
}

Value RuntimeCalls::nullPtr(Location loc) {
  return LLVM::ZeroOp::create(b, loc, ptrType());
}

/// `prefix` followed by the first number from `next` that no symbol of
/// `module` has yet: each exported function is lowered by a RuntimeCalls of
/// its own, and their globals share the module.
static std::string freeSymbolName(ModuleOp module, const llvm::Twine &prefix,
                                  int64_t &next) {
  for (;; ++next) {
    std::string name = (prefix + llvm::Twine(next)).str();
    if (!module.lookupSymbol(name))
      return name;
  }
}

static constexpr llvm::StringLiteral kStringPrefix = "__zrt_str_";

RuntimeCalls::RuntimeCalls(ModuleOp module, OpBuilder &builder)
    : module(module), b(builder) {
  for (auto global : module.getOps<LLVM::GlobalOp>())
    if (global.getSymName().starts_with(kStringPrefix))
      if (auto bytes = dyn_cast_or_null<StringAttr>(global.getValueOrNull()))
        strings[bytes.getValue().drop_back()] = global.getSymName().str();
}

Value RuntimeCalls::string(Location loc, StringRef value) {
  std::string &name = strings[value];
  if (!name.empty())
    return LLVM::AddressOfOp::create(b, loc, ptrType(), name);
  name = freeSymbolName(module, kStringPrefix, numStrings);
  std::string bytes = (value + llvm::Twine('\0')).str();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
    LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                           LLVM::Linkage::Internal, name,
                           b.getStringAttr(bytes));
  }
  return LLVM::AddressOfOp::create(b, loc, ptrType(), name);
}

Value RuntimeCalls::floatTable(Location loc, StringRef prefix,
                               ArrayRef<float> values) {
  auto tensorType =
      RankedTensorType::get({(int64_t)values.size()}, b.getF32Type());
  auto data = DenseElementsAttr::get(tensorType, values);
  std::string &name = floatTables[data];
  if (name.empty()) {
    int64_t next = floatTables.size() - 1;
    name = freeSymbolName(module, "__zrt_" + prefix + "_", next);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto type = LLVM::LLVMArrayType::get(b.getF32Type(), values.size());
    LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                           LLVM::Linkage::Internal, name, data);
  }
  return LLVM::AddressOfOp::create(b, loc, ptrType(), name);
}

} // namespace zero
