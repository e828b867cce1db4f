//===- StepLowering.h - @train_step on tensors to zrt on buffers -*- C++ -*-===//
//
// The state zero-lower-to-runtime keeps while it turns one tensor function
// into a zrt function: the buffer of each tensor, which buffers the step
// owns, their ledger categories and liveness. The ops are lowered in program
// order by one pattern family per op group (LowerKernels.cpp for nn,
// LowerCollectives.cpp for zero), each asking this class for the buffers of
// its operands and results. Buffers are allocated right before their
// producer and freed right after their last use, so the runtime's ledger
// sees the program's real liveness.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_PASSES_STEPLOWERING_H
#define ZERO_PASSES_STEPLOWERING_H

#include "dialects/nn/NNDialect.h"
#include "dialects/zero/ZeroDialect.h"
#include "dialects/zrt/ZrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/SetVector.h"

#include <optional>

namespace zero {

/// A tensor type as the buffer that holds it.
mlir::MemRefType getBufferType(mlir::Type tensorType);

class StepLowering {
public:
  /// Lowers the body of `tensorFunc` into `bufferFunc`, whose leading
  /// arguments are the buffers of its arguments and whose trailing
  /// argument, when `lossOut` is given, receives the loss.
  StepLowering(mlir::func::FuncOp tensorFunc, mlir::OpBuilder &builder)
      : tensorFunc(tensorFunc), b(builder) {}

  mlir::LogicalResult lower(mlir::Block &bufferBody, mlir::Value lossOut);

  /// The buffer of a tensor already lowered.
  mlir::Value buf(mlir::Value tensor) const { return buffers.lookup(tensor); }
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
  mlir::OpBuilder &builder() { return b; }
  /// The handle of a started collective, by the future it returned.
  llvm::DenseMap<mlir::Value, mlir::Value> handles;

private:
  mlir::func::FuncOp tensorFunc;
  mlir::OpBuilder &b;
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
  unsigned position = 0;

  void analyse();
  void lowerReturn(mlir::func::ReturnOp ret, mlir::Value lossOut);
  void freeDeadValues(mlir::Operation *op);
  /// `buffer` with the type of `tensor` (a zrt.view when it has another).
  mlir::Value typedAs(mlir::Value buffer, mlir::Value tensor);
};

/// The pattern families: each lowers `op` when it belongs to its group
/// (returning failure after a diagnostic when it cannot), or returns
/// std::nullopt when the op is not of its group.
std::optional<mlir::LogicalResult> lowerKernelOp(StepLowering &lowering,
                                                 mlir::Operation *op);
std::optional<mlir::LogicalResult> lowerShardingOp(StepLowering &lowering,
                                                   mlir::Operation *op);

} // namespace zero

#endif // ZERO_PASSES_STEPLOWERING_H
