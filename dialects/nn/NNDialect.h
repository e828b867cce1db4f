//===- NNDialect.h - the nn dialect -----------------------------*- C++ -*-===//
#ifndef ZERO_DIALECTS_NN_NNDIALECT_H
#define ZERO_DIALECTS_NN_NNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/nn/NNDialect.h.inc"
#include "dialects/nn/NNInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/nn/NNOps.h.inc"

namespace zero::nn {
/// Name of the argument attribute that marks a model parameter.
inline constexpr llvm::StringLiteral kParamAttrName = "nn.param";
} // namespace zero::nn

#endif // ZERO_DIALECTS_NN_NNDIALECT_H
