//===- NNInterfaces.td - nn op interfaces ------------------*- tablegen -*-===//
//
// The gradient interface that lets one generic pass (nn-autodiff) build the
// backward pass of any nn graph: each op knows how to turn the gradients of
// its results into gradients of its operands.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_NN_INTERFACES
#define ZERO_NN_INTERFACES

include "mlir/IR/OpBase.td"

def NN_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let description = [{
    An op that knows its own reverse-mode derivative. Given the gradient of
    the (scalar) loss with respect to each result, the op emits, at the
    builder's insertion point, the ops that compute the gradient with respect
    to each operand. Operands that are not differentiable (integer labels)
    get a null Value.
  }];
  let cppNamespace = "::zero::nn";

  let methods = [
    InterfaceMethod<[{
        Emits the vector-Jacobian product of this op. `resultGrads` holds one
        gradient per result (never null). Returns one Value per operand, null
        where the operand has no gradient.
      }],
      "::llvm::SmallVector<::mlir::Value>", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGrads)>,
  ];
}

#endif // ZERO_NN_INTERFACES
