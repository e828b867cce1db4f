//===- ProgramDescription.cpp - @zero_program_describe --------------------===//
#include "passes/Conversion/ZeroToZrt/ProgramDescription.h"

#include "dialects/nn/NNDialect.h"
#include "dialects/zero/ZeroDialect.h"
#include "dialects/zrt/ZrtDialect.h"
#include "passes/Utils/PassUtils.h"
#include "zero/zrt.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace zero::sharding;

namespace zero {

namespace {
struct ArgDescription {
  std::string name;
  zrt_role role = ZRT_ROLE_FEATURES;
  RankedTensorType type; // The whole tensor, even when sharded.
  bool sharded = false;
  bool host = false; // In host memory (optimizer offload).
  zrt_init init = ZRT_INIT_ZEROS;
  float initScale = 0.0f;
};
} // namespace

/// How argument `index` (a parameter) starts: its nn.init attributes, or
/// torch.nn.Linear's default for matrices and zeros for the rest.
static void describeInit(func::FuncOp func, unsigned index,
                         ArgDescription &desc) {
  StringRef init = getArgString(func, index, kInitAttrName);
  if (auto scale = func.getArgAttrOfType<FloatAttr>(index, kInitScaleAttrName))
    desc.initScale = scale.getValueAsDouble();
  if (!init.empty()) {
    desc.init = llvm::StringSwitch<zrt_init>(init)
                    .Case("ones", ZRT_INIT_ONES)
                    .Case("uniform", ZRT_INIT_UNIFORM)
                    .Case("normal", ZRT_INIT_NORMAL)
                    .Default(ZRT_INIT_ZEROS);
    return;
  }
  if (desc.type.getRank() == 2) {
    desc.init = ZRT_INIT_UNIFORM;
    desc.initScale = 1.0f / std::sqrt(float(desc.type.getShape()[0]));
  }
}

/// The parameter argument named `name`, if any.
static std::optional<unsigned> findParam(func::FuncOp func, StringRef name) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (getParamName(func, i) == name)
      return i;
  return std::nullopt;
}

static FailureOr<ArgDescription>
describeArgument(func::FuncOp func, unsigned index, StringRef passName) {
  ArgDescription desc;
  desc.type = cast<RankedTensorType>(func.getArgument(index).getType());
  if (auto full =
          func.getArgAttrOfType<TypeAttr>(index, kUnshardedTypeAttrName))
    desc.type = cast<RankedTensorType>(full.getValue());
  auto placement =
      func.getArgAttrOfType<PlacementAttr>(index, kPlacementAttrName);
  desc.host = placement && placement.getMemory() == sharding::Memory::Host;
  desc.sharded =
      placement && placement.isSharded() && placement.getRole() != Role::Data;
  auto error = [&]() {
    return func.emitError() << passName << ": argument #" << index << " ("
                            << func.getArgument(index).getType() << ") ";
  };

  if (StringRef name = getParamName(func, index); !name.empty()) {
    desc.name = name.str();
    desc.role = ZRT_ROLE_PARAM;
    describeInit(func, index, desc);
  } else if (StringRef name = getArgString(func, index, kMasterAttrName);
             !name.empty()) {
    // Same name and initialiser as its parameter: the runtime initialises
    // (or loads) both from one set of values.
    std::optional<unsigned> param = findParam(func, name);
    if (!param)
      return error() << "is the master copy of '" << name
                     << "', which is no parameter";
    desc.name = name.str();
    desc.role = ZRT_ROLE_MASTER;
    describeInit(func, *param, desc);
  } else if (StringRef name = getArgString(func, index, kGradAccumAttrName);
             !name.empty()) {
    desc.name = ("grad_accum." + name).str();
    desc.role = ZRT_ROLE_GRAD_ACCUM;
  } else if (StringRef m = getArgString(func, index, kAdamMAttrName);
             !m.empty()) {
    desc.name = ("adam_m." + m).str();
    desc.role = ZRT_ROLE_ADAM_M;
  } else if (StringRef v = getArgString(func, index, kAdamVAttrName);
             !v.empty()) {
    desc.name = ("adam_v." + v).str();
    desc.role = ZRT_ROLE_ADAM_V;
  } else if (StringRef hyper = getArgString(func, index, kHyperAttrName);
             !hyper.empty()) {
    desc.name = hyper.str();
    std::optional<zrt_role> role =
        llvm::StringSwitch<std::optional<zrt_role>>(hyper)
            .Case("lr", ZRT_ROLE_LR)
            .Case("step", ZRT_ROLE_STEP)
            .Case("max_norm", ZRT_ROLE_MAX_NORM)
            .Case("beta1", ZRT_ROLE_BETA1)
            .Case("beta2", ZRT_ROLE_BETA2)
            .Case("eps", ZRT_ROLE_EPS)
            .Case("weight_decay", ZRT_ROLE_WEIGHT_DECAY)
            .Default(std::nullopt);
    if (!role)
      return error() << "has an unknown " << kHyperAttrName << " \"" << hyper
                     << "\"";
    desc.role = *role;
  } else {
    // Data: what nn.data says, or what its type suggests.
    StringRef kind = getArgString(func, index, kDataAttrName);
    bool isInt = desc.type.getElementType().isInteger(32);
    if (kind.empty() && desc.type.getRank() == 2 && !isInt)
      kind = "features";
    else if (kind.empty() && desc.type.getRank() == 1 && isInt)
      kind = "labels";
    if (kind.empty())
      return error() << "is neither state nor data the runtime can feed (a "
                        "float feature matrix or an int32 label vector)";
    desc.name = kind.str();
    desc.role = llvm::StringSwitch<zrt_role>(kind)
                    .Case("features", ZRT_ROLE_FEATURES)
                    .Case("labels", ZRT_ROLE_LABELS)
                    .Case("tokens", ZRT_ROLE_TOKENS)
                    .Case("targets", ZRT_ROLE_TARGETS)
                    .Case("positions", ZRT_ROLE_POSITIONS);
  }
  if (desc.type.getRank() > 4)
    return error() << "has rank " << desc.type.getRank()
                   << "; the runtime takes at most 4 dimensions";
  return desc;
}

/// What zrt_declare_program needs besides the arguments.
struct ProgramShape {
  zrt_task task = ZRT_TASK_CLASSIFY;
  int64_t globalBatch = 0, seqLen = 1, numFeatures = 0, numClasses = 0;
};

static FailureOr<ProgramShape> describeProgram(func::FuncOp func,
                                               ArrayRef<ArgDescription> args,
                                               int64_t worldSize,
                                               StringRef passName) {
  ProgramShape shape;
  func.walk([&](nn::SoftmaxCrossEntropyOp loss) {
    shape.numClasses = loss.getLogits().getType().getShape()[1];
  });
  for (const ArgDescription &arg : args) {
    if (arg.role == ZRT_ROLE_FEATURES) {
      shape.globalBatch = arg.type.getShape()[0] * worldSize;
      shape.numFeatures = arg.type.getShape()[1];
    }
    if (arg.role == ZRT_ROLE_TOKENS) {
      shape.task = ZRT_TASK_LM;
      auto seqLen = func->getAttrOfType<IntegerAttr>(kSeqLenAttrName);
      if (!seqLen)
        return func.emitError() << passName << ": token data needs the "
                                << kSeqLenAttrName << " function attribute";
      shape.seqLen = seqLen.getInt();
      shape.globalBatch = arg.type.getShape()[0] / shape.seqLen * worldSize;
    }
  }
  if (!shape.globalBatch || !shape.numClasses)
    return func.emitError()
           << passName
           << ": @train_step needs a feature matrix or token argument and an "
              "nn.softmax_cross_entropy loss for the runtime's data set";
  return shape;
}

LogicalResult emitProgramDescription(func::FuncOp trainStep,
                                     StringRef passName) {
  auto module = trainStep->getParentOfType<ModuleOp>();
  auto intAttr = [&](StringRef name) -> int64_t {
    auto attr = trainStep->getAttrOfType<IntegerAttr>(name);
    return attr ? attr.getInt() : 0;
  };
  // A program that never went through zero-split-batch runs on one rank.
  sharding::GroupOp group = sharding::getDataParallelGroup(module);
  int64_t worldSize = group ? group.getWorldSize() : 1;
  int64_t stage = group ? group.getStage().value_or(0) : 0;
  SmallVector<ArgDescription> args;
  for (unsigned i = 0, e = trainStep.getNumArguments(); i < e; ++i) {
    FailureOr<ArgDescription> desc = describeArgument(trainStep, i, passName);
    if (failed(desc))
      return failure();
    args.push_back(*desc);
  }
  FailureOr<ProgramShape> shape =
      describeProgram(trainStep, args, worldSize, passName);
  if (failed(shape))
    return failure();

  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  Location loc = trainStep.getLoc();
  auto describe = func::FuncOp::create(b, loc, "zero_program_describe",
                                       b.getFunctionType({}, {}));
  b.setInsertionPointToStart(describe.addEntryBlock());
  zrt::DeclareProgramOp::create(
      b, loc, worldSize, stage, static_cast<zrt::Task>(shape->task),
      shape->globalBatch, shape->seqLen, shape->numFeatures, shape->numClasses);
  // Hybrid sharding: the sharded arguments are shards of the @shard group.
  if (sharding::GroupOp sharding = sharding::getShardingGroup(module);
      sharding && sharding != group)
    zrt::DeclareShardGroupsOp::create(b, loc, sharding.getWorldSize());
  zrt::DeclareMicroBatchesOp::create(
      b, loc, std::max<int64_t>(1, intAttr(kMicroBatchesAttrName)));
  // zero-exact-sums' chunk, moved into the program.
  if (auto chunk = module->getAttrOfType<IntegerAttr>(kDeterministicAttrName)) {
    zrt::DeclareDeterministicOp::create(b, loc, chunk.getInt());
    module->removeAttr(kDeterministicAttrName);
  }
  // The frontend's config.json of a transformer, moved into the program.
  if (auto config = module->getAttrOfType<StringAttr>(kHFConfigAttrName)) {
    zrt::DeclareHfConfigOp::create(b, loc, config);
    module->removeAttr(kHFConfigAttrName);
  }
  for (auto [i, arg] : llvm::enumerate(args))
    zrt::DeclareArgOp::create(b, loc, i, arg.name,
                              static_cast<zrt::Role>(arg.role), arg.sharded,
                              arg.host, static_cast<zrt::Init>(arg.init),
                              llvm::APFloat(arg.initScale), arg.type);
  func::ReturnOp::create(b, loc);
  return success();
}

} // namespace zero
