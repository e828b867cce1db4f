//===- ZrtDialect.cpp - the zrt runtime dialect ---------------------------===//
#include "dialects/zrt/ZrtDialect.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "mlir/IR/DialectImplementation.h"

#include <limits>

using namespace mlir;
using namespace zero::zrt;

#include "dialects/zrt/ZrtDialect.cpp.inc"
#include "dialects/zrt/ZrtEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/zrt/ZrtAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/zrt/ZrtTypes.cpp.inc"

// The enums are zrt.h's, value for value: the lowering passes them as they
// are.
static_assert(int(MemCategory::Param) == ZRT_MEM_PARAM &&
              int(MemCategory::Grad) == ZRT_MEM_GRAD &&
              int(MemCategory::Optimizer) == ZRT_MEM_OPTIMIZER &&
              int(MemCategory::Activation) == ZRT_MEM_ACTIVATION &&
              int(MemCategory::Comm) == ZRT_MEM_COMM &&
              int(MemCategory::Data) == ZRT_MEM_DATA &&
              int(MemCategory::HostOptimizer) == ZRT_MEM_HOST_OPTIMIZER &&
              int(MemCategory::HostStaging) == ZRT_MEM_HOST_STAGING &&
              getMaxEnumValForMemCategory() + 1 == ZRT_MEM_NUM_CATEGORIES);
static_assert(int(Role::Features) == ZRT_ROLE_FEATURES &&
              int(Role::Labels) == ZRT_ROLE_LABELS &&
              int(Role::Param) == ZRT_ROLE_PARAM &&
              int(Role::AdamM) == ZRT_ROLE_ADAM_M &&
              int(Role::AdamV) == ZRT_ROLE_ADAM_V &&
              int(Role::Lr) == ZRT_ROLE_LR && int(Role::Step) == ZRT_ROLE_STEP &&
              int(Role::Tokens) == ZRT_ROLE_TOKENS &&
              int(Role::Targets) == ZRT_ROLE_TARGETS &&
              int(Role::Positions) == ZRT_ROLE_POSITIONS &&
              int(Role::Master) == ZRT_ROLE_MASTER &&
              int(Role::MaxNorm) == ZRT_ROLE_MAX_NORM &&
              int(Role::GradAccum) == ZRT_ROLE_GRAD_ACCUM &&
              int(Role::Beta1) == ZRT_ROLE_BETA1 &&
              int(Role::Beta2) == ZRT_ROLE_BETA2 &&
              int(Role::Eps) == ZRT_ROLE_EPS &&
              int(Role::WeightDecay) == ZRT_ROLE_WEIGHT_DECAY &&
              getMaxEnumValForRole() == ZRT_ROLE_WEIGHT_DECAY);
static_assert(int(Init::Zeros) == ZRT_INIT_ZEROS &&
              int(Init::Uniform) == ZRT_INIT_UNIFORM &&
              int(Init::Normal) == ZRT_INIT_NORMAL &&
              int(Init::Ones) == ZRT_INIT_ONES);
static_assert(int(Task::Classify) == ZRT_TASK_CLASSIFY &&
              int(Task::LM) == ZRT_TASK_LM);
static_assert(int(Group::World) == ZRT_GROUP_WORLD &&
                  int(Group::Shard) == ZRT_GROUP_SHARD &&
                  int(Group::Replica) == ZRT_GROUP_REPLICA,
              "zrt.h's zrt_group");
static_assert(int(Epilogue::Bias) == ZRT_EPILOGUE_BIAS &&
              int(Epilogue::BiasGelu) == ZRT_EPILOGUE_BIAS_GELU);

void ZrtDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/zrt/ZrtAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/zrt/ZrtTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/zrt/ZrtOps.cpp.inc"
      >();
}

namespace zero::zrt {
int64_t getNumElements(Value buffer) {
  // Counted here with overflow checks, since the verifiers size any buffer
  // the input declares: MemRefType::getNumElements wraps around.
  ArrayRef<int64_t> shape = cast<MemRefType>(buffer.getType()).getShape();
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t elements = 1;
  for (int64_t dim : shape)
    if (llvm::MulOverflow(elements, dim, elements))
      return std::numeric_limits<int64_t>::max();
  return elements;
}

const CollectiveInfo &getCollectiveInfo(zrt_collective kind) {
  constexpr bool kSums = true, kMoves = false;
  static const CollectiveInfo infos[ZRT_NUM_COLLECTIVES] = {
#define ZRT_COLLECTIVE(KIND, name, Name, shape, elements, ...)                 \
  {#name, CollectiveShape::shape, k##elements},
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
  };
  return infos[kind];
}

int64_t getElementBytes(Value buffer) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  return (element.getIntOrFloatBitWidth() + 7) / 8;
}

int64_t getByteSize(Value buffer) {
  int64_t bytes;
  if (llvm::MulOverflow(getNumElements(buffer), getElementBytes(buffer),
                        bytes))
    return std::numeric_limits<int64_t>::max();
  return bytes;
}

zrt_dtype getElementDType(Type element) {
  if (element.isBF16())
    return ZRT_BF16;
  if (element.isInteger(128))
    return ZRT_EXACT;
  return ZRT_F32;
}

zrt_dtype getDType(Value buffer) {
  return getElementDType(cast<MemRefType>(buffer.getType()).getElementType());
}
} // namespace zero::zrt
