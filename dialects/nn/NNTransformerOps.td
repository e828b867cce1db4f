//===- NNTransformerOps.td - ops of GPT-2 and Llama --------*- tablegen -*-===//
//
// Included by NNOps.td. Token activations are matrices [batch * seq, width]:
// one row per token, sequences contiguous, so that `seq_len` recovers the
// batch wherever an op needs it (attention, rotary embeddings).
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

def NN_EmbeddingOp : NN_Op<"embedding",
    [NN_BatchSplitByRule,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
     AllElementTypesMatch<["table", "result"]>]> {
  let summary = "looks up one table row per id";
  let description = [{
    `result[i, :] = table[ids[i], :]`: token embeddings, and position
    embeddings when `ids` holds positions. An id outside the table stops the
    program with a message.

    ```mlir
    %x = nn.embedding %tokens, %wte : tensor<64xi32>, tensor<256x32xf32> -> tensor<64x32xf32>
    ```

    Constraints:
    - (C1) `result` is [number of ids, table columns].
  }];
  let arguments = (ins NN_LabelVector:$ids, NN_FloatMatrix:$table);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = [{
    $ids `,` $table attr-dict `:` type($ids) `,` type($table) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_EmbeddingGradOp : NN_Op<"embedding_grad",
    [AllElementTypesMatch<["result_grad", "result"]>]> {
  let summary = "gradient of nn.embedding with respect to its table";
  let description = [{
    `result = 0; result[ids[i], :] += result_grad[i, :]`, accumulated in
    float32.

    ```mlir
    %dwte = nn.embedding_grad %tokens, %dx : tensor<64xi32>, tensor<64x32xf32> -> tensor<256x32xf32>
    ```

    Constraints:
    - (C1) `result` has the columns of `result_grad`, which has one row per id.
  }];
  let arguments = (ins NN_LabelVector:$ids, NN_FloatMatrix:$result_grad);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = [{
    $ids `,` $result_grad attr-dict `:` type($ids) `,` type($result_grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def NN_LayerNormOp : NN_Op<"layer_norm",
    [NN_BatchSplitOpInterface,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
     AllTypesMatch<["input", "result"]>,
     AllTypesMatch<["gamma", "beta"]>,
     AllElementTypesMatch<["input", "gamma"]>]> {
  let summary = "row-wise layer normalisation with gain and bias (GPT-2)";
  let description = [{
    `result = (input - mean) / sqrt(var + epsilon) * gamma + beta` over each
    row (biased variance, as `torch.nn.LayerNorm`).

    ```mlir
    %y = nn.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<64x32xf32>, tensor<32xf32>
    ```

    Constraints:
    - (C1) `gamma` has one element per column of `input`.
  }];
  let arguments = (ins NN_FloatMatrix:$input, NN_FloatVector:$gamma,
                       NN_FloatVector:$beta, F32Attr:$epsilon);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def NN_LayerNormGradOp : NN_Op<"layer_norm_grad",
    [AllTypesMatch<["input", "result_grad", "input_grad"]>,
     AllTypesMatch<["gamma", "gamma_grad", "beta_grad"]>]> {
  let summary = "gradients of nn.layer_norm (input, gamma, beta)";
  let description = [{
    Recomputes each row's statistics and returns the gradients with respect
    to the input, and to `gamma` and `beta` summed over the rows.

    ```mlir
    %dx, %dg, %db = nn.layer_norm_grad %x, %g, %dy {epsilon = 1.0e-05 : f32} : tensor<64x32xf32>, tensor<32xf32>
    ```

    Constraints:
    - (C1) `gamma` has one element per column of `input`.
  }];
  let arguments = (ins NN_FloatMatrix:$input, NN_FloatVector:$gamma,
                       NN_FloatMatrix:$result_grad, F32Attr:$epsilon);
  let results = (outs NN_FloatMatrix:$input_grad, NN_FloatVector:$gamma_grad,
                      NN_FloatVector:$beta_grad);
  let assemblyFormat = [{
    $input `,` $gamma `,` $result_grad attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def NN_RmsNormOp : NN_Op<"rms_norm",
    [NN_BatchSplitOpInterface,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
     AllTypesMatch<["input", "result"]>,
     AllElementTypesMatch<["input", "gamma"]>]> {
  let summary = "row-wise RMS normalisation with gain (Llama)";
  let description = [{
    `result = input / sqrt(mean(input^2) + epsilon) * gamma` over each row,
    computed in float32 (as Hugging Face's `LlamaRMSNorm`).

    ```mlir
    %y = nn.rms_norm %x, %g {epsilon = 1.0e-05 : f32} : tensor<64x32xf32>, tensor<32xf32>
    ```

    Constraints:
    - (C1) `gamma` has one element per column of `input`.
  }];
  let arguments = (ins NN_FloatMatrix:$input, NN_FloatVector:$gamma,
                       F32Attr:$epsilon);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = [{
    $input `,` $gamma attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def NN_RmsNormGradOp : NN_Op<"rms_norm_grad",
    [AllTypesMatch<["input", "result_grad", "input_grad"]>,
     AllTypesMatch<["gamma", "gamma_grad"]>]> {
  let summary = "gradients of nn.rms_norm (input, gamma)";
  let description = [{
    ```mlir
    %dx, %dg = nn.rms_norm_grad %x, %g, %dy {epsilon = 1.0e-05 : f32} : tensor<64x32xf32>, tensor<32xf32>
    ```

    Constraints:
    - (C1) `gamma` has one element per column of `input`.
  }];
  let arguments = (ins NN_FloatMatrix:$input, NN_FloatVector:$gamma,
                       NN_FloatMatrix:$result_grad, F32Attr:$epsilon);
  let results = (outs NN_FloatMatrix:$input_grad, NN_FloatVector:$gamma_grad);
  let assemblyFormat = [{
    $input `,` $gamma `,` $result_grad attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gated MLP
//===----------------------------------------------------------------------===//

def NN_SwigluOp : NN_Op<"swiglu",
    [NN_BatchSplitOpInterface,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
     SameOperandsAndResultType]> {
  let summary = "SiLU-gated product (Llama's MLP)";
  let description = [{
    `result = silu(gate) * up`, `silu(g) = g * sigmoid(g)`, elementwise.

    ```mlir
    %h = nn.swiglu %gate, %up : tensor<64x86xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$gate, NN_FloatTensor:$up);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def NN_SwigluGradOp : NN_Op<"swiglu_grad",
    [AllTypesMatch<["gate", "up", "result_grad", "gate_grad", "up_grad"]>]> {
  let summary = "gradients of nn.swiglu (gate, up)";
  let description = [{
    ```mlir
    %dgate, %dup = nn.swiglu_grad %gate, %up, %dy : tensor<64x86xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$gate, NN_FloatTensor:$up,
                       NN_FloatTensor:$result_grad);
  let results = (outs NN_FloatTensor:$gate_grad, NN_FloatTensor:$up_grad);
  let assemblyFormat = "$gate `,` $up `,` $result_grad attr-dict `:` type($gate)";
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def NN_RopeOp : NN_Op<"rope",
    [NN_BatchSplitOpInterface,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
     SameOperandsAndResultType]> {
  let summary = "rotary position embedding of queries or keys (Llama)";
  let description = [{
    Rotates each head of each token by angles `pos * inv_freq[i]`, `pos`
    being the token's position in its sequence (row % `seq_len`), with
    Hugging Face's `rotate_half` pairing (element i with i + head_dim/2).
    With `inverse` the rotation goes the other way: that is the gradient.

    `inv_freq[i] = theta^(-2i/head_dim)`, rescaled by `scaling` when given,
    as transformers' rope types of the same names do:
    - `"linear"`: every frequency divided by `factor`;
    - `"llama3"` (Llama 3.1 and later): frequencies whose wavelength exceeds
      `original_max_positions / low_freq_factor` divided by `factor`, those
      shorter than `original_max_positions / high_freq_factor` kept, and
      those between interpolated smoothly.
    The lowering computes the table once, in float32 and in transformers'
    order of operations (`getInverseFrequencies`), and hands it to the
    runtime, so every backend rotates by the same angles.

    ```mlir
    %qr = nn.rope %q {num_heads = 4 : i64, seq_len = 16 : i64, theta = 1.0e+04 : f32} : tensor<64x32xf32>
    %kr = nn.rope %k {num_heads = 2 : i64, seq_len = 16 : i64, theta = 5.0e+05 : f32,
                      scaling = "llama3", factor = 8.0 : f32, low_freq_factor = 1.0 : f32,
                      high_freq_factor = 4.0 : f32, original_max_positions = 8192 : i64} : tensor<64x16xf32>
    ```

    Constraints:
    - (C1) rows divide by `seq_len`; columns divide by `num_heads` into an
      even head dimension.
    - (C2) `theta` > 1.
    - (C3) without `scaling`, none of `factor`, `low_freq_factor`,
      `high_freq_factor`, `original_max_positions`; with `"linear"`, a
      positive `factor` only; with `"llama3"`, all four, `factor` > 0,
      0 < `low_freq_factor` < `high_freq_factor`, `original_max_positions` > 0.
    - (C4) a head dimension of at most 65536: the lowering computes its table
      of head_dim/2 frequencies at compile time and embeds it in the program.
  }];
  let arguments = (ins NN_FloatMatrix:$input, I64Attr:$num_heads,
                       I64Attr:$seq_len, F32Attr:$theta, UnitAttr:$inverse,
                       OptionalAttr<StrAttr>:$scaling,
                       OptionalAttr<F32Attr>:$factor,
                       OptionalAttr<F32Attr>:$low_freq_factor,
                       OptionalAttr<F32Attr>:$high_freq_factor,
                       OptionalAttr<I64Attr>:$original_max_positions);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getHeadDim() {
      return ::llvm::cast<::mlir::RankedTensorType>(getInput().getType())
                 .getDimSize(1) / getNumHeads();
    }
    /// inv_freq[i] for i < head_dim / 2 (see the description).
    ::llvm::SmallVector<float> getInverseFrequencies();
  }];
}

def NN_AttentionOp : NN_Op<"attention",
    [NN_BatchSplitOpInterface,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
     AllTypesMatch<["query", "result"]>, AllTypesMatch<["key", "value"]>,
     AllElementTypesMatch<["query", "key"]>]> {
  let summary = "causal multi-head attention with grouped-query heads";
  let description = [{
    `softmax(q k^T / sqrt(head_dim) + causal mask) v` per sequence and head.
    `query` is [batch * seq_len, num_heads * head_dim]; `key` and `value` are
    [batch * seq_len, num_kv_heads * head_dim], query head h reading kv head
    h / (num_heads / num_kv_heads). The kernel never materialises the
    seq_len x seq_len score matrix.

    ```mlir
    %a = nn.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, seq_len = 16 : i64}
        : tensor<64x32xf32>, tensor<64x16xf32>
    ```

    Constraints:
    - (C1) `num_heads` divides the query columns and is a multiple of
      `num_kv_heads`.
    - (C2) key columns are `num_kv_heads * head_dim`; all three have the same
      rows, a multiple of `seq_len`.
  }];
  let arguments = (ins NN_FloatMatrix:$query, NN_FloatMatrix:$key,
                       NN_FloatMatrix:$value, I64Attr:$num_heads,
                       I64Attr:$num_kv_heads, I64Attr:$seq_len);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` type($query) `,` type($key)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getHeadDim() {
      return getQuery().getType().getShape()[1] / getNumHeads();
    }
  }];
}

def NN_AttentionGradOp : NN_Op<"attention_grad",
    [AllTypesMatch<["query", "result_grad", "query_grad"]>,
     AllTypesMatch<["key", "value", "key_grad", "value_grad"]>]> {
  let summary = "gradients of nn.attention (query, key, value)";
  let description = [{
    Recomputes the attention probabilities row by row.

    ```mlir
    %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %da {num_heads = 4 : i64, num_kv_heads = 2 : i64, seq_len = 16 : i64}
        : tensor<64x32xf32>, tensor<64x16xf32>
    ```

    Constraints: as nn.attention.
  }];
  let arguments = (ins NN_FloatMatrix:$query, NN_FloatMatrix:$key,
                       NN_FloatMatrix:$value, NN_FloatMatrix:$result_grad,
                       I64Attr:$num_heads, I64Attr:$num_kv_heads,
                       I64Attr:$seq_len);
  let results = (outs NN_FloatMatrix:$query_grad, NN_FloatMatrix:$key_grad,
                      NN_FloatMatrix:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $result_grad attr-dict `:` type($query) `,` type($key)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shapes and types
//===----------------------------------------------------------------------===//

def NN_SliceColsOp : NN_Op<"slice_cols",
    [NN_BatchSplitByRule,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>,
     AllElementTypesMatch<["input", "result"]>]> {
  let summary = "a block of consecutive columns of a matrix";
  let description = [{
    `result = input[:, offset : offset + size]`, e.g. the query, key and
    value parts of GPT-2's fused attention projection.

    ```mlir
    %k = nn.slice_cols %qkv {offset = 32 : i64} : tensor<64x96xf32> -> tensor<64x32xf32>
    ```

    Constraints:
    - (C1) the block lies inside the input and has its rows.
  }];
  let arguments = (ins NN_FloatMatrix:$input, I64Attr:$offset);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def NN_SliceColsGradOp : NN_Op<"slice_cols_grad",
    [AllElementTypesMatch<["result_grad", "result"]>]> {
  let summary = "gradient of nn.slice_cols: the block placed in zeros";
  let description = [{
    ```mlir
    %dqkv_k = nn.slice_cols_grad %dk {offset = 32 : i64} : tensor<64x32xf32> -> tensor<64x96xf32>
    ```

    Constraints:
    - (C1) the block lies inside the result and has its rows.
  }];
  let arguments = (ins NN_FloatMatrix:$result_grad, I64Attr:$offset);
  let results = (outs NN_FloatMatrix:$result);
  let assemblyFormat = "$result_grad attr-dict `:` type($result_grad) `->` type($result)";
  let hasVerifier = 1;
}

def NN_CastOp : NN_Op<"cast",
    [NN_BatchSplitByRule,
     DeclareOpInterfaceMethods<NN_DifferentiableOpInterface>]> {
  let summary = "converts between float32 and bfloat16";
  let description = [{
    Elementwise conversion, rounding to nearest even towards bfloat16: the
    bfloat16 parameter from its float32 master copy, float32 accumulators of
    bfloat16 gradients.

    ```mlir
    %p16 = nn.cast %master : tensor<96xf32> -> tensor<96xbf16>
    ```

    Constraints:
    - (C1) input and result have the same shape.
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradient clipping
//===----------------------------------------------------------------------===//

def NN_SumSquaresOp : NN_Op<"sum_squares"> {
  let summary = "sum of the squared elements, in float32";
  let description = [{
    This rank's part of a gradient's squared norm. `param` names the
    parameter whose gradient it is, when known: the runtime's
    `--check-finite` then names the first parameter whose gradient is not
    finite.

    ```mlir
    %s = nn.sum_squares %g of "h.0.mlp.c_fc.weight" : tensor<96xbf16> -> tensor<f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, OptionalAttr<StrAttr>:$param);
  let results = (outs NN_F32Scalar:$result);
  let assemblyFormat = [{
    $input (`of` $param^)? attr-dict `:` type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Exact sums (--deterministic)
//===----------------------------------------------------------------------===//

def NN_AccumulateExactOp : NN_Op<"accumulate_exact"> {
  let summary = "adds a float tensor into an exact accumulator";
  let description = [{
    `acc + exact(input)` element by element. An exact accumulator holds
    each value times 2^64 as a 128-bit integer (the runtime's `ZRT_EXACT`),
    so sums of them are exact and do not depend on their order: under
    `--deterministic` every gradient, loss and norm is summed this way
    across micro-batches and ranks. A non-finite input (or one of magnitude
    2^62 or more) makes the element "not a number", which stays so.

    ```mlir
    %sum = nn.accumulate_exact %acc, %g : tensor<64x32xi128>, tensor<64x32xf32> -> tensor<64x32xi128>
    ```

    Constraints:
    - (C1) `acc`, `input` and the result have the same shape.
  }];
  let arguments = (ins NN_ExactTensor:$acc, NN_FloatTensor:$input);
  let results = (outs NN_ExactTensor:$result);
  let assemblyFormat = [{
    $acc `,` $input attr-dict `:` type($acc) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_SumSquaresExactOp : NN_Op<"sum_squares_exact"> {
  let summary = "adds the exact sum of the squared elements to an accumulator";
  let description = [{
    `acc + sum_i exact(input[i]^2)`, each square computed exactly: the
    gradient norm under `--deterministic`, the same whatever part of the
    gradient each rank holds. `param` names the parameter, as for
    `nn.sum_squares`.

    ```mlir
    %t = nn.sum_squares_exact %acc, %g of "fc0.weight" : tensor<i128>, tensor<96xf32> -> tensor<i128>
    ```
  }];
  let arguments = (ins NN_ExactScalar:$acc, NN_FloatTensor:$input,
                       OptionalAttr<StrAttr>:$param);
  let results = (outs NN_ExactScalar:$result);
  let assemblyFormat = [{
    $acc `,` $input (`of` $param^)? attr-dict `:` type($acc) `,` type($input)
    `->` type($result)
  }];
}

def NN_FromExactOp : NN_Op<"from_exact"> {
  let summary = "the float32 nearest to each element of an exact accumulator";
  let description = [{
    Converts an exact sum back to float32, once, after every addition
    (a "not a number" element becomes NaN).

    ```mlir
    %g = nn.from_exact %sum : tensor<64x32xi128> -> tensor<64x32xf32>
    ```

    Constraints:
    - (C1) input and result have the same shape.
  }];
  let arguments = (ins NN_ExactTensor:$input);
  let results = (outs NN_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def NN_ClipCoefficientOp : NN_Op<"clip_coefficient",
    [SameOperandsAndResultType]> {
  let summary = "the gradient scale of global-norm clipping";
  let description = [{
    `result = max_norm > 0 ? min(1, max_norm / (sqrt(total_sq) + 1e-6)) : 1`,
    as `torch.nn.utils.clip_grad_norm_`, from the squared norm of all
    gradients.

    ```mlir
    %scale = nn.clip_coefficient %total_sq, %max_norm : tensor<f32>
    ```
  }];
  let arguments = (ins NN_F32Scalar:$total_sq, NN_F32Scalar:$max_norm);
  let results = (outs NN_F32Scalar:$result);
  let assemblyFormat = "$total_sq `,` $max_norm attr-dict `:` type($result)";
}
