//===- ZeroDialect.cpp - the zero sharding dialect ------------------------===//
#include "dialects/zero/ZeroDialect.h"

#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace zero::sharding;

#include "dialects/zero/ZeroDialect.cpp.inc"
#include "dialects/zero/ZeroEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/zero/ZeroAttrs.cpp.inc"

void ZeroDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/zero/ZeroAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/zero/ZeroOps.cpp.inc"
      >();
}
