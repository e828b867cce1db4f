//===- Analysis/Passes.h - the analyses of the zrt program ----*- C++ -*-===//
//
// The analyses of the zrt program (Analysis/Passes.td): each pass's create
// function, options struct and registration.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_PASSES_ANALYSIS_PASSES_H
#define ZERO_PASSES_ANALYSIS_PASSES_H

#include "dialects/nn/NNDialect.h"
#include "dialects/zero/ZeroDialect.h"
#include "dialects/zrt/ZrtDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "passes/Analysis/SchedulePrediction.h" // TimeModelOptions

#include <string>
#include <vector>

namespace zero {

#define GEN_PASS_DECL
#include "passes/Analysis/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Analysis/Passes.h.inc"

} // namespace zero

#endif // ZERO_PASSES_ANALYSIS_PASSES_H
