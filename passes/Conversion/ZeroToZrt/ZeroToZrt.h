//===- ZeroToZrt.h - @train_step on tensors to zrt on buffers ---*- C++ -*-===//
//
// zero-lower-to-zrt is a dialect conversion: a TypeConverter turns each
// tensor into a buffer (a memref of its shape) and each future into a zrt
// handle, and one pattern family per op group (LowerKernels.cpp for nn,
// LowerCollectives.cpp for zero, LowerZeroToZrt.cpp for the function and its
// return) turns the ops into zrt ops on their operands' buffers.
//
// What a pattern cannot see from its op alone is the buffer assignment,
// which is this class: which buffer each result is written to (a new
// zrt.alloc of its ledger category, an operand's buffer that dies here, or
// the argument the result updates), and after which op each buffer dies. It
// is computed from the tensor function before the conversion starts, and
// the conversion visits the ops in program order, so buffers are allocated
// right before their producer and freed right after their last use: the
// runtime's ledger sees the program's real liveness.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_PASSES_CONVERSION_ZEROTOZRT_ZEROTOZRT_H
#define ZERO_PASSES_CONVERSION_ZEROTOZRT_ZEROTOZRT_H

#include "dialects/nn/NNDialect.h"
#include "dialects/zero/ZeroDialect.h"
#include "dialects/zrt/ZrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/SetVector.h"

#include <optional>

namespace zero {

/// A tensor type as the buffer that holds it.
mlir::MemRefType getBufferType(mlir::Type tensorType);

/// Tensors to buffers, futures to zrt handles; every other type unchanged.
class StepTypeConverter : public mlir::TypeConverter {
public:
  StepTypeConverter();
};

class StepLowering {
public:
  /// Analyses `tensorFunc`, whose trailing argument, when `lossOut` is
  /// given, is the buffer that receives the loss.
  StepLowering(mlir::func::FuncOp tensorFunc, mlir::Value lossOut);

  /// Called by every pattern around the zrt ops it creates: `begin` points
  /// the buffer assignment at `op` and at the rewriter's insertion point,
  /// `finish` frees what dies at `op` and returns the buffers (or handles)
  /// that replace its results.
  void begin(mlir::Operation *op, mlir::OpBuilder &builder);
  llvm::SmallVector<mlir::Value> finish(mlir::Operation *op);

  /// The buffers of the tensor function's arguments (the converted entry
  /// block's arguments).
  void setArgumentBuffers(mlir::ValueRange buffers);

  /// The buffer (or handle) assigned to a tensor (or future) already
  /// lowered. A pattern reads its operands from its adaptor; this is for
  /// the results it assigned and for values it is not an operand of.
  mlir::Value buf(mlir::Value tensor) const { return buffers.lookup(tensor); }
  void setHandle(mlir::Value future, mlir::Value handle) {
    buffers[future] = handle;
  }
  /// Chooses the buffer of `result`: straight into the argument it updates
  /// when nothing reads that argument afterwards; over `inPlaceOperand` when
  /// the op may write in place and the operand dies here (at
  /// `operandDiesAt`, by default this op); else a new zrt.alloc.
  mlir::Value bufferFor(mlir::Value result, zrt::MemCategory category,
                        mlir::Value inPlaceOperand = nullptr,
                        std::optional<unsigned> operandDiesAt = std::nullopt);
  /// The buffer of a kernel's result: gradient memory when it is a whole
  /// parameter gradient, else activation memory.
  mlir::Value result(mlir::Value tensor, mlir::Value inPlace = nullptr) {
    return bufferFor(tensor,
                     isGradient(tensor) ? zrt::MemCategory::Grad
                                        : zrt::MemCategory::Activation,
                     inPlace);
  }
  bool isGradient(mlir::Value tensor) const {
    return gradients.contains(tensor);
  }
  unsigned positionOf(mlir::Operation *op) const {
    return positions.lookup(op);
  }
  /// The argument `result` updates (zero.updates), if any.
  mlir::Value destinationOf(mlir::Value result) const {
    return destinations.lookup(result);
  }
  mlir::Value lossOut() const { return loss; }
  mlir::OpBuilder &builder() { return *b; }
  mlir::MLIRContext *getContext() { return tensorFunc.getContext(); }

private:
  mlir::func::FuncOp tensorFunc;
  /// The tensor function's arguments (its entry block is replaced when
  /// its signature is converted).
  llvm::SmallVector<mlir::Value> arguments;
  mlir::Value loss;
  mlir::OpBuilder *b = nullptr;
  /// The buffer holding each tensor.
  llvm::DenseMap<mlir::Value, mlir::Value> buffers;
  /// Tensors whose buffer this step allocated and must free.
  llvm::SetVector<mlir::Value> owned;
  /// Position in the block of each tensor's last user.
  llvm::DenseMap<mlir::Value, unsigned> lastUse;
  /// Results that update an argument, and that argument.
  llvm::DenseMap<mlir::Value, mlir::Value> destinations;
  /// Whole parameter gradients: what the collectives reduce and AdamW reads.
  /// Their buffers count as gradient memory, the rest of the backward's as
  /// activations.
  llvm::DenseSet<mlir::Value> gradients;
  /// The ledger category each owned buffer was allocated under.
  llvm::DenseMap<mlir::Value, zrt::MemCategory> categories;
  /// Block position of each op.
  llvm::DenseMap<mlir::Operation *, unsigned> positions;
  /// The values whose last use is at each position.
  llvm::DenseMap<unsigned, llvm::SmallVector<mlir::Value>> deaths;
  /// Results nothing reads: they die where they are made.
  llvm::DenseSet<mlir::Value> unread;
  unsigned position = 0;

  void analyse();
  /// `buffer` with the type of `tensor` (a zrt.view when it has another).
  mlir::Value typedAs(mlir::Value buffer, mlir::Value tensor);
};

/// Why `op` cannot be lowered, emitted on it, when no pattern can take it
/// (checked before the conversion starts, so that the conversion itself
/// cannot fail half way).
mlir::LogicalResult checkLowerable(mlir::Operation *op);

/// The pattern families.
void populateKernelLoweringPatterns(mlir::RewritePatternSet &patterns,
                                    const mlir::TypeConverter &converter,
                                    StepLowering &lowering);
void populateShardingLoweringPatterns(mlir::RewritePatternSet &patterns,
                                      const mlir::TypeConverter &converter,
                                      StepLowering &lowering);

/// The pattern of every op of the step: brackets the zrt ops that `lower`
/// creates by the buffer assignment's begin and finish, and replaces the op
/// by its results' buffers.
template <typename SourceOp>
class StepPattern : public mlir::OpConversionPattern<SourceOp> {
public:
  using Adaptor = typename SourceOp::Adaptor;
  StepPattern(const mlir::TypeConverter &converter, StepLowering &lowering)
      : mlir::OpConversionPattern<SourceOp>(converter, lowering.getContext()),
        l(lowering) {}

  mlir::LogicalResult
  matchAndRewrite(SourceOp op, Adaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const final {
    l.begin(op, rewriter);
    lower(op, adaptor, rewriter);
    llvm::SmallVector<mlir::Value> replacements = l.finish(op);
    if (op->getNumResults() == 0)
      rewriter.eraseOp(op);
    else
      rewriter.replaceOp(op, replacements);
    return mlir::success();
  }

private:
  /// Creates the zrt ops of `op` at `b`, choosing its results' buffers
  /// through the buffer assignment: specialised for each op by its pattern
  /// family (LowerKernels.cpp, LowerCollectives.cpp).
  void lower(SourceOp op, Adaptor adaptor, mlir::OpBuilder &b) const;

  /// The buffer of a kernel's result (StepLowering::result).
  mlir::Value out(mlir::Value tensor, mlir::Value inPlace = nullptr) const {
    return l.result(tensor, inPlace);
  }

  StepLowering &l;
};

} // namespace zero

#endif // ZERO_PASSES_CONVERSION_ZEROTOZRT_ZEROTOZRT_H
