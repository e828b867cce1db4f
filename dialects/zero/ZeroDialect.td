//===- ZeroDialect.td - the zero sharding dialect ----------*- tablegen -*-===//
#ifndef ZERO_ZERO_DIALECT
#define ZERO_ZERO_DIALECT

include "mlir/IR/OpBase.td"

def Zero_Dialect : Dialect {
  let name = "zero";
  let cppNamespace = "::zero::sharding";
  let summary = "Where training state lives across a data-parallel group";
  let description = [{
    The `zero` dialect expresses ZeRO sharding. The `#zero.placement`
    attribute, attached to the arguments of the training step, says what role
    a tensor plays (parameter, gradient, optimizer moment, ...) and whether
    each rank holds all of it (`replicated`) or only its flat shard
    (`sharded`). A sharded tensor of N elements over W ranks is held as a 1-D
    tensor of S = ceil(N / W) elements: rank r owns elements [r*S, r*S + S)
    of the tensor flattened in row-major order and padded with zeros to W*S.

    The collectives move tensors between those forms over the data-parallel
    group named `"dp"` of `W` ranks:

    ```mlir
    %w = zero.all_gather %w_shard over "dp"(4) : tensor<95xf32> -> tensor<19x20xf32>
    %g_shard = zero.reduce_scatter %g over "dp"(4) : tensor<19x20xf32> -> tensor<95xf32>
    %loss = zero.all_reduce %local_loss over "dp"(4) : tensor<f32>
    zero.release %w : tensor<19x20xf32>
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasOperationAttrVerify = 1;
}

#endif // ZERO_ZERO_DIALECT
