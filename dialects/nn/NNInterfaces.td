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

def NN_BatchSplitOpInterface : OpInterface<"BatchSplitOpInterface"> {
  let description = [{
    An op of the forward that `zero-split-batch` can run on one rank's rows:
    it says its result's type once its operands have their per-rank types
    (the batch split along the rows). The default, for ops whose result is
    shaped as their first operand (elementwise ops, norms, attention), is
    that operand's type; ops whose result follows another rule (a matrix
    product, a lookup, a loss) implement the method. An op without the
    interface cannot be split.
  }];
  let cppNamespace = "::zero::nn";

  let methods = [
    InterfaceMethod<[{
        The type of the op's result (every result: the ops have one) given
        the current types of its operands.
      }],
      "::mlir::Type", "inferSplitResultType", (ins), "",
      [{ return $_op->getOperand(0).getType(); }]>,
  ];
}

def NN_OptimizerUpdateOpInterface : OpInterface<"OptimizerUpdateOpInterface"> {
  let description = [{
    An optimizer's update of one parameter (`nn.adamw`, `nn.lion`): the
    passes that only need to know which value is a gradient and which a
    parameter (the buffer categories of `zero-lower-to-zrt`, the float32
    reductions) ask this instead of naming optimizers.
  }];
  let cppNamespace = "::zero::nn";

  let methods = [
    InterfaceMethod<"The parameter (or its float32 master) updated.",
                    "::mlir::Value", "getParam">,
    InterfaceMethod<"The gradient the update reads.", "::mlir::Value",
                    "getGrad">,
  ];
}

// A splittable op whose result follows a rule of its own (its
// inferSplitResultType in NNOps.cpp or NNTransformerOps.cpp).
def NN_BatchSplitByRule
    : DeclareOpInterfaceMethods<NN_BatchSplitOpInterface,
                                ["inferSplitResultType"]>;

#endif // ZERO_NN_INTERFACES
