//===- MLPModel.h - the built-in MLP preset ---------------------*- C++ -*-===//
#ifndef ZERO_LIB_FRONTEND_MLPMODEL_H
#define ZERO_LIB_FRONTEND_MLPMODEL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace zero {

/// A classifier: `hiddenLayers` layers of `width` units with `activation`,
/// then a linear layer to `classes` logits and softmax cross-entropy, over a
/// global batch of `batch` rows of `features` floats.
struct MLPOptions {
  int64_t hiddenLayers = 2;
  int64_t width = 50;
  int64_t features = 20;
  int64_t classes = 10;
  int64_t batch = 24;
  std::string activation = "relu"; // relu or gelu
};

/// Builds `@forward` of the MLP in the nn dialect, or reports why the
/// options are invalid and returns null.
mlir::OwningOpRef<mlir::ModuleOp> buildMLP(mlir::MLIRContext *ctx,
                                           const MLPOptions &options);

} // namespace zero

#endif // ZERO_LIB_FRONTEND_MLPMODEL_H
