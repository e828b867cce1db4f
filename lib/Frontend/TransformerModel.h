//===- TransformerModel.h - GPT-2 and Llama in the nn dialect ---*- C++ -*-===//
#ifndef ZERO_LIB_FRONTEND_TRANSFORMERMODEL_H
#define ZERO_LIB_FRONTEND_TRANSFORMERMODEL_H

#include "lib/Frontend/TransformerConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace zero {

/// What one training step of a language model sees.
struct LMTrainShape {
  int64_t batch = 8;   // Global batch: sequences per step over all ranks.
  int64_t seqLen = 64; // Tokens per sequence.
  bool bf16 = false;   // bfloat16 parameters and activations.
};

/// Builds `@forward` of the model: next-token cross-entropy over a batch of
/// token sequences, with the parameters named and laid out as in Hugging
/// Face's safetensors files, so weights load by name. Reports invalid shapes
/// at `loc` and returns null.
mlir::OwningOpRef<mlir::ModuleOp>
buildTransformer(mlir::MLIRContext *ctx, const TransformerConfig &config,
                 const LMTrainShape &shape, mlir::Location loc);

} // namespace zero

#endif // ZERO_LIB_FRONTEND_TRANSFORMERMODEL_H
