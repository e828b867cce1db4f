//===- PassUtils.h - helpers shared by the zero-opt passes ------*- C++ -*-===//
#ifndef ZERO_PASSES_UTILS_PASSUTILS_H
#define ZERO_PASSES_UTILS_PASSUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace zero {

/// The largest tensor the pipeline takes, in bytes: 2^48 (256 TiB), the
/// virtual address space of a rank. The passes add such sizes up in int64_t
/// (memory plans, traffic, the ledger), which tensors of any size would
/// overflow; zero-split-batch refuses larger ones as the pipeline starts.
inline constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// Names of the functions the pipeline passes from one pass to the next.
inline constexpr llvm::StringLiteral kForwardFuncName = "forward";
inline constexpr llvm::StringLiteral kTrainStepFuncName = "train_step";
inline constexpr llvm::StringLiteral kTrainApplyFuncName = "train_apply";
inline constexpr llvm::StringLiteral kEvalStepFuncName = "eval_step";

/// Function attribute of language models: tokens per sequence. Data rows
/// are tokens, and ranks split whole sequences.
inline constexpr llvm::StringLiteral kSeqLenAttrName = "nn.seq_len";

/// Argument and result attributes that tie training state together.
inline constexpr llvm::StringLiteral kGradOfAttrName = "nn.grad_of";
inline constexpr llvm::StringLiteral kAdamMAttrName = "nn.adam_m";
inline constexpr llvm::StringLiteral kAdamVAttrName = "nn.adam_v";
inline constexpr llvm::StringLiteral kHyperAttrName = "nn.hyper";
/// Float32 accumulator of the reduced gradient of the named parameter.
inline constexpr llvm::StringLiteral kGradAccumAttrName = "nn.grad_accum";
/// Float32 master copy of the bfloat16 parameter of the same name.
inline constexpr llvm::StringLiteral kMasterAttrName = "nn.master";
/// What a data argument holds: features, labels, tokens, targets, positions.
inline constexpr llvm::StringLiteral kDataAttrName = "nn.data";
/// How a parameter starts when no weights are loaded: zeros, ones, uniform,
/// normal; with nn.init_scale (bound or standard deviation).
inline constexpr llvm::StringLiteral kInitAttrName = "nn.init";
inline constexpr llvm::StringLiteral kInitScaleAttrName = "nn.init_scale";
inline constexpr llvm::StringLiteral kUpdatesAttrName = "zero.updates";
/// Module attribute of a transformer built by the frontend: its Hugging
/// Face config.json, declared to the runtime for --export-hf.
inline constexpr llvm::StringLiteral kHFConfigAttrName = "nn.hf_config";
/// Function attribute: micro-batches accumulated per optimizer step.
inline constexpr llvm::StringLiteral kMicroBatchesAttrName =
    "zero.micro_batches";
/// Module attribute of a --deterministic program (zero-exact-sums): the
/// rows each rank computes per micro-batch.
inline constexpr llvm::StringLiteral kDeterministicAttrName =
    "zero.deterministic";
/// Module attribute of a program with recomputed units (nn-recompute):
/// {units, ops[, baseline_activation_peak, baseline_peak]}, for zero-report.
inline constexpr llvm::StringLiteral kRecomputeAttrName = "zero.recompute";
/// Attribute of an op nn-recompute cloned into the backward: its unit.
inline constexpr llvm::StringLiteral kRecomputedAttrName = "nn.recomputed";
/// Argument attribute: the whole tensor's type of a sharded argument.
inline constexpr llvm::StringLiteral kUnshardedTypeAttrName =
    "zero.unsharded_type";
/// Function attribute: the #zero.placement of the gradients.
inline constexpr llvm::StringLiteral kGradPlacementAttrName = "zero.grads";

/// Finds `@name` in `module`, or reports at the module which pass must run
/// first (at the function when it has no body) and returns null.
mlir::func::FuncOp lookupFunction(mlir::ModuleOp module, llvm::StringRef name,
                                  llvm::StringRef passName,
                                  llvm::StringRef producedBy);

/// The `nn.param` name of argument `index`, or empty when it is no parameter.
llvm::StringRef getParamName(mlir::func::FuncOp func, unsigned index);

/// The string value of argument attribute `attrName`, or empty.
llvm::StringRef getArgString(mlir::func::FuncOp func, unsigned index,
                             llvm::StringRef attrName);

/// The unit a parameter belongs to, for bucketing and keeping gathered
/// copies: its name up to and including the first all-digit component
/// (`h.3.attn.c_attn.weight` -> `h.3`), or the whole name without one.
llvm::StringRef getParamUnit(llvm::StringRef paramName);

/// Whether a unit is a block: its last component is all digits (`h.3`,
/// `model.layers.3`), as --recompute=blocks and the planner take them.
bool isBlockUnit(llvm::StringRef unit);

/// `loc` named `name` (a NameLoc around it): how the passes tell the
/// runtime which tensor a collective moves, for the watchdog's message.
mlir::Location withCollectiveLabel(mlir::Location loc, llvm::StringRef name);

/// The name withCollectiveLabel gave `loc` (the outermost NameLoc), or empty.
llvm::StringRef getCollectiveLabel(mlir::Location loc);

/// The label of a collective that moves the tensors of `labels` in one
/// buffer: "bucket of 5: a, b, c, ..." (the first three named).
std::string bucketLabel(llvm::ArrayRef<mlir::Location> labels);

/// The reduction a gradient that AdamW reads goes through last before it is
/// a shard: the zero.reduce_scatter that defines `gradient`, or, with hybrid
/// sharding, the one behind the zero.all_reduce over @replica that adds the
/// shard groups' sums. Null for a whole (replicated) gradient.
mlir::Operation *getShardReduction(mlir::Value gradient);

/// Element count of a statically shaped tensor type.
int64_t getNumElements(mlir::Type type);

/// Bytes of a statically shaped tensor type (elements of whole bytes).
int64_t getByteSize(mlir::Type type);

} // namespace zero

#endif // ZERO_PASSES_UTILS_PASSUTILS_H
