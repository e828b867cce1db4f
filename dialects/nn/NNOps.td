//===- NNOps.td - the nn dialect ---------------------------*- tablegen -*-===//
//
// Coarse, kernel-sized tensor ops for neural-network training. Each op maps
// 1:1 onto a runtime kernel, and each forward op knows its own gradient
// through NN_DifferentiableOpInterface, so autodiff is one generic pass.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_NN_OPS
#define ZERO_NN_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "dialects/nn/NNInterfaces.td"

def NN_Dialect : Dialect {
  let name = "nn";
  let cppNamespace = "::zero::nn";
  let hasRegionArgAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let summary = "Kernel-sized tensor ops for training neural networks";
  let description = [{
    The `nn` dialect holds the forward graph of a model and, after
    `nn-autodiff`, its backward graph. Values are statically shaped, row-major
    tensors. A model is a `func.func` whose parameters are arguments carrying
    an `nn.param = "<name>"` attribute; the other arguments are the batch
    (float features and int32 labels), and the single result is the scalar
    loss:

    ```mlir
    func.func @forward(%x: tensor<8x4xf32>, %labels: tensor<8xi32>,
                       %w: tensor<4x3xf32> {nn.param = "fc.weight"},
                       %b: tensor<3xf32> {nn.param = "fc.bias"}) -> tensor<f32> {
      %h = nn.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
      %logits = nn.bias_add %h, %b : tensor<8x3xf32>, tensor<3xf32>
      %loss = nn.softmax_cross_entropy %logits, %labels
          : tensor<8x3xf32>, tensor<8xi32> -> tensor<f32>
      return %loss : tensor<f32>
    }
    ```
  }];
}

class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, !listconcat(traits, [Pure])>;

// Activations, parameters and gradients are float32, or bfloat16 in mixed
// precision; kernels accumulate in float32 either way. Losses, norms and
// optimizer state are float32 always.
def NN_FloatTensor : RankedTensorOf<[F32, BF16]>;
def NN_FloatMatrix : 2DTensorOf<[F32, BF16]>;
def NN_FloatVector : 1DTensorOf<[F32, BF16]>;
def NN_F32Tensor : RankedTensorOf<[F32]>;
def NN_F32Scalar : 0DTensorOf<[F32]>;
def NN_LabelVector : 1DTensorOf<[I32]>;
// The exact accumulators of --deterministic: 128-bit fixed point, the
// runtime's ZRT_EXACT (value * 2^64 as a two's-complement integer).
def NN_ExactTensor : RankedTensorOf<[I<128>]>;
def NN_ExactScalar : 0DTensorOf<[I<128>]>;

//===----------------------------------------------------------------------===//
// Forward ops
//===----------------------------------------------------------------------===//

def NN_MatmulOp : NN_Op<"matmul",
    [NN_BatchSplitByRule,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
     AllElementTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "matrix product of two matrices, either one transposed";
  let description = [{
    `result = op(lhs) * op(rhs)`, where `op` transposes its operand when the
    matching `transpose_lhs` / `transpose_rhs` flag is present. A linear layer
    is a matmul with weights stored `[in, out]` followed by `nn.bias_add`.

    ```mlir
    %y = nn.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
    %dx = nn.matmul %dy, %w transpose_rhs
        : tensor<8x3xf32>, tensor<4x3xf32> -> tensor<8x4xf32>
    ```

    Constraints:
    - (C1) the contraction dimensions of `op(lhs)` and `op(rhs)` are equal.
    - (C2) `result` has shape `[rows of op(lhs), columns of op(rhs)]`.
  }];
  let arguments = (ins NN_FloatMatrix:$lhs, NN_FloatMatrix:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   CArg<"bool", "false">:$transposeLhs,
                   CArg<"bool", "false">:$transposeRhs)>
  ];
  let extraClassDeclaration = [{
    /// The type of `op(lhs) * op(rhs)`.
    static ::mlir::RankedTensorType inferResultType(::mlir::Value lhs,
        ::mlir::Value rhs, bool transposeLhs, bool transposeRhs);
  }];
}

def NN_BiasAddOp : NN_Op<"bias_add",
    [NN_BatchSplitOpInterface,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
     AllTypesMatch<["input", "result"]>,
     AllElementTypesMatch<["input", "bias"]>]> {
  let summary = "adds a bias vector to every row of a matrix";
  let description = [{
    `result[r, c] = input[r, c] + bias[c]`.

    ```mlir
    %y = nn.bias_add %h, %b : tensor<8x3xf32>, tensor<3xf32>
    ```

    Constraints:
    - (C1) `bias` has as many elements as `input` has columns.
  }];
  let arguments = (ins NN_FloatMatrix:$input, NN_FloatVector:$bias);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = [{
    $input `,` $bias attr-dict `:` type($input) `,` type($bias)
  }];
  let hasVerifier = 1;
}

def NN_AddOp : NN_Op<"add",
    [NN_BatchSplitOpInterface,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
     SameOperandsAndResultType, Commutative]> {
  let summary = "elementwise sum of two tensors of one type";
  let description = [{
    Residual connections, and the sum of the gradients of a value that has
    several uses (emitted by `nn-autodiff`).

    ```mlir
    %s = nn.add %a, %b : tensor<8x3xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$lhs, NN_FloatTensor:$rhs);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

class NN_UnaryOp<string mnemonic, string summaryText, string formula>
    : NN_Op<mnemonic, [NN_BatchSplitOpInterface,
                       DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
                       SameOperandsAndResultType]> {
  let summary = summaryText;
  let description = "`result = " # formula # "`, elementwise.\n\n"
      # "```mlir\n%y = nn." # mnemonic # " %x : tensor<8x3xf32>\n```";
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def NN_ReluOp : NN_UnaryOp<"relu", "rectified linear unit", "max(input, 0)">;
def NN_GeluOp : NN_UnaryOp<"gelu", "GELU, tanh approximation (as GPT-2)",
    "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))">;

//===----------------------------------------------------------------------===//
// Fused linear layers (made by nn-fuse-epilogues)
//===----------------------------------------------------------------------===//

// A matmul whose epilogue adds a bias (and applies GELU): one GEMM with a
// fused epilogue on the GPU (cuBLASLt's BIAS / GELU_AUX_BIAS), the three
// kernels in sequence on the CPU. Operands, flags and constraints are those
// of nn.matmul plus the bias of nn.bias_add.
class NN_MatmulBiasOpBase<string mnemonic, list<Trait> traits = []>
    : NN_Op<mnemonic, !listconcat(traits,
        [NN_BatchSplitByRule,
         DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
         AllElementTypesMatch<["lhs", "rhs", "bias", "result"]>])> {
  let arguments = (ins NN_FloatMatrix:$lhs, NN_FloatMatrix:$rhs,
                       NN_FloatVector:$bias, UnitAttr:$transpose_lhs,
                       UnitAttr:$transpose_rhs);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $bias (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict `:` type($lhs) `,`
    type($rhs) `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_MatmulBiasOp : NN_MatmulBiasOpBase<"matmul_bias"> {
  let summary = "a linear layer: matmul and bias in one kernel";
  let description = [{
    `result = op(lhs) * op(rhs) + bias` (bias added to every row), the fusion
    of an `nn.matmul` whose only use is an `nn.bias_add`.

    ```mlir
    %y = nn.matmul_bias %x, %w, %b
        : tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32> -> tensor<8x3xf32>
    ```

    Constraints:
    - (C1) the contraction dimensions of `op(lhs)` and `op(rhs)` are equal.
    - (C2) `result` has shape `[rows of op(lhs), columns of op(rhs)]`.
    - (C3) `bias` has as many elements as `result` has columns.
  }];
  let results = (outs NN_FloatMatrix:$result);
}

def NN_MatmulBiasGeluOp : NN_MatmulBiasOpBase<"matmul_bias_gelu",
    [AllTypesMatch<["pre_activation", "result"]>]> {
  let summary = "a linear layer followed by GELU, in one kernel";
  let description = [{
    `pre_activation = op(lhs) * op(rhs) + bias` and
    `result = gelu(pre_activation)` (tanh approximation, as `nn.gelu`): the
    fusion of `nn.matmul`, `nn.bias_add` and `nn.gelu`. The pre-activation
    is a result because GELU's gradient needs it; on the GPU the same GEMM
    writes both (cuBLASLt's GELU_AUX_BIAS epilogue).

    ```mlir
    %h, %g = nn.matmul_bias_gelu %x, %w, %b
        : tensor<8x4xf32>, tensor<4x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
    ```

    Constraints: (C1) to (C3) of `nn.matmul_bias`.
  }];
  let results = (outs NN_FloatMatrix:$pre_activation,
                      NN_FloatMatrix:$result);
}

def NN_SoftmaxCrossEntropyOp : NN_Op<"softmax_cross_entropy",
    [NN_BatchSplitByRule,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>]> {
  let summary = "softmax cross-entropy loss of logits against class labels";
  let description = [{
    `result = sum_r (logsumexp(logits[r, :]) - logits[r, labels[r]]) / divisor`.

    Without `divisor` the loss is the mean over the rows. Data-parallel
    splitting of the batch (`zero-split-batch`) sets `divisor` to the global
    batch, so that the sum of every rank's loss is the global mean.

    ```mlir
    %loss = nn.softmax_cross_entropy %logits, %labels
        : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
    %local = nn.softmax_cross_entropy %logits, %labels {divisor = 32 : i64}
        : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
    ```

    Constraints:
    - (C1) `labels` has one element per row of `logits`.
    - (C2) `divisor`, when present, is positive.
  }];
  let arguments = (ins NN_FloatMatrix:$logits, NN_LabelVector:$labels,
                       OptionalAttr<I64Attr>:$divisor);
  let results = (outs NN_F32Scalar:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The divisor of the summed per-row losses: `divisor`, or the row count.
    int64_t getEffectiveDivisor();
  }];
}

//===----------------------------------------------------------------------===//
// Backward ops (emitted by nn-autodiff)
//===----------------------------------------------------------------------===//

def NN_SumRowsOp : NN_Op<"sum_rows",
    [NN_BatchSplitByRule,
     AllElementTypesMatch<["input", "result"]>]> {
  let summary = "column sums of a matrix (the gradient of a bias)";
  let description = [{
    `result[c] = sum_r input[r, c]`.

    ```mlir
    %db = nn.sum_rows %dy : tensor<8x3xf32> -> tensor<3xf32>
    ```

    Constraints:
    - (C1) `result` has as many elements as `input` has columns.
  }];
  let arguments = (ins NN_FloatMatrix:$input);
  let results = (outs NN_FloatVector:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input)>];
}

class NN_ActivationGradOp<string mnemonic, string forward>
    : NN_Op<mnemonic, [NN_BatchSplitOpInterface,
                       SameOperandsAndResultType]> {
  let summary = "gradient of nn." # forward;
  let description = "`result = result_grad * d " # forward
      # "(input) / d input`, elementwise.\n\n```mlir\n%dx = nn." # mnemonic
      # " %x, %dy : tensor<8x3xf32>\n```";
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$result_grad);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input `,` $result_grad attr-dict `:` type($result)";
}

def NN_ReluGradOp : NN_ActivationGradOp<"relu_grad", "relu">;
def NN_GeluGradOp : NN_ActivationGradOp<"gelu_grad", "gelu">;

def NN_SoftmaxCrossEntropyGradOp : NN_Op<"softmax_cross_entropy_grad",
    [NN_BatchSplitOpInterface,
     AllTypesMatch<["logits", "result"]>]> {
  let summary = "gradient of nn.softmax_cross_entropy with respect to logits";
  let description = [{
    `result[r, c] = loss_grad * (softmax(logits[r, :])[c] - (c == labels[r])) / divisor`.

    ```mlir
    %dlogits = nn.softmax_cross_entropy_grad %logits, %labels, %dloss {divisor = 8 : i64}
        : tensor<8x10xf32>, tensor<8xi32>, tensor<f32>
    ```

    Constraints:
    - (C1) `labels` has one element per row of `logits`.
    - (C2) `divisor` is positive.
  }];
  let arguments = (ins NN_FloatMatrix:$logits, NN_LabelVector:$labels,
                       NN_F32Scalar:$loss_grad, I64Attr:$divisor);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $loss_grad attr-dict `:` type($logits) `,` type($labels) `,` type($loss_grad)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

def NN_AdamWOp : NN_Op<"adamw",
    [NN_OptimizerUpdateOpInterface,
     AllTypesMatch<["param", "exp_avg", "exp_avg_sq",
                    "new_param", "new_exp_avg", "new_exp_avg_sq"]>,
     AllTypesMatch<["lr", "step", "beta1", "beta2", "eps", "weight_decay"]>]> {
  let summary = "one AdamW update of a parameter and its two moments";
  let description = [{
    Decoupled weight decay Adam, as `torch.optim.AdamW`, with bias correction
    for the 1-based `step`, on a float32 parameter (the master copy of a
    bfloat16 parameter in mixed precision) and float32 moments. The gradient
    may be bfloat16; it is scaled by `grad_scale` (gradient clipping) when
    that operand is present:

    ```
    g  = g * grad_scale;        p = p * (1 - lr * weight_decay)
    m' = beta1 m + (1 - beta1) g;   v' = beta2 v + (1 - beta2) g^2
    p' = p - lr * (m' / (1 - beta1^step)) / (sqrt(v' / (1 - beta2^step)) + eps)
    ```

    All four tensors have one shape: the whole parameter at stage 0, or this
    rank's flat shard of it from stage 1 on. The hyperparameters `lr`,
    `step`, `beta1`, `beta2`, `eps` and `weight_decay` are runtime scalars
    (arguments of the step function that the runtime fills from its flags),
    so changing one needs no recompilation; the runtime checks their ranges.

    ```mlir
    %p2, %m2, %v2 = nn.adamw %p, %g, %m, %v, lr = %lr, step = %step,
        beta1 = %beta1, beta2 = %beta2, eps = %eps, weight_decay = %wd
        : tensor<96xf32>, tensor<96xbf16>, tensor<f32>
    ```

    Constraints:
    - (C1) the gradient has the shape of the parameter.
  }];
  let arguments = (ins NN_F32Tensor:$param, NN_FloatTensor:$grad,
                       NN_F32Tensor:$exp_avg, NN_F32Tensor:$exp_avg_sq,
                       NN_F32Scalar:$lr, NN_F32Scalar:$step,
                       NN_F32Scalar:$beta1, NN_F32Scalar:$beta2,
                       NN_F32Scalar:$eps, NN_F32Scalar:$weight_decay,
                       Optional<NN_F32Scalar>:$grad_scale);
  let results = (outs NN_F32Tensor:$new_param, NN_F32Tensor:$new_exp_avg,
                      NN_F32Tensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` `lr` `=` $lr `,` `step` `=` $step
    `,` `beta1` `=` $beta1 `,` `beta2` `=` $beta2 `,` `eps` `=` $eps `,`
    `weight_decay` `=` $weight_decay
    (`,` `grad_scale` `=` $grad_scale^ `:` type($grad_scale))?
    attr-dict `:` type($param) `,` type($grad) `,` type($lr)
  }];
  let hasVerifier = 1;
}

def NN_LionOp : NN_Op<"lion",
    [NN_OptimizerUpdateOpInterface,
     AllTypesMatch<["param", "exp_avg", "new_param", "new_exp_avg"]>,
     AllTypesMatch<["lr", "beta1", "beta2", "weight_decay"]>]> {
  let summary = "one Lion update of a parameter and its momentum";
  let description = [{
    Lion (Chen et al. 2023), as lion-pytorch and `optax.lion`, with decoupled
    weight decay, on a float32 parameter (the master copy of a bfloat16
    parameter in mixed precision) and a float32 momentum. The gradient may
    be bfloat16; it is scaled by `grad_scale` (gradient clipping) when that
    operand is present:

    ```
    g  = g * grad_scale;        p = p * (1 - lr * weight_decay)
    p' = p - lr * sign(beta1 m + (1 - beta1) g)
    m' = beta2 m + (1 - beta2) g
    ```

    One moment instead of AdamW's two, and an update of the same size in
    every coordinate. The hyperparameters are runtime scalars, as for
    `nn.adamw`.

    ```mlir
    %p2, %m2 = nn.lion %p, %g, %m, lr = %lr, beta1 = %beta1, beta2 = %beta2,
        weight_decay = %wd : tensor<96xf32>, tensor<96xbf16>, tensor<f32>
    ```

    Constraints:
    - (C1) the gradient has the shape of the parameter.
  }];
  let arguments = (ins NN_F32Tensor:$param, NN_FloatTensor:$grad,
                       NN_F32Tensor:$exp_avg, NN_F32Scalar:$lr,
                       NN_F32Scalar:$beta1, NN_F32Scalar:$beta2,
                       NN_F32Scalar:$weight_decay,
                       Optional<NN_F32Scalar>:$grad_scale);
  let results = (outs NN_F32Tensor:$new_param, NN_F32Tensor:$new_exp_avg);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` `lr` `=` $lr `,` `beta1` `=` $beta1 `,`
    `beta2` `=` $beta2 `,` `weight_decay` `=` $weight_decay
    (`,` `grad_scale` `=` $grad_scale^ `:` type($grad_scale))?
    attr-dict `:` type($param) `,` type($grad) `,` type($lr)
  }];
  let hasVerifier = 1;
}

include "dialects/nn/NNTransformerOps.td"

#endif // ZERO_NN_OPS
