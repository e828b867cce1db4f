//===- NNDialect.cpp - the nn dialect -------------------------------------===//
#include "dialects/nn/NNDialect.h"

using namespace mlir;
using namespace zero::nn;

#include "dialects/nn/NNDialect.cpp.inc"
#include "dialects/nn/NNInterfaces.cpp.inc"

void NNDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/nn/NNOps.cpp.inc"
      >();
}
