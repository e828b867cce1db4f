//===- ZeroOps.td - ops of the zero dialect ----------------*- tablegen -*-===//
#ifndef ZERO_ZERO_OPS
#define ZERO_ZERO_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "dialects/zero/ZeroDialect.td"
include "dialects/zero/ZeroAttrs.td"
include "dialects/zero/ZeroTypes.td"
include "dialects/zero/ZeroInterfaces.td"

class Zero_Op<string mnemonic, list<Trait> traits = []>
    : Op<Zero_Dialect, mnemonic, traits>;

// Float tensors, and the exact accumulators of --deterministic (i128), which
// gradient reductions sum exactly.
def Zero_Shard : 1DTensorOf<[F32, BF16, I128]>;
def Zero_AnyTensor : RankedTensorOf<[F32, BF16, I128]>;

//===----------------------------------------------------------------------===//
// The data-parallel group
//===----------------------------------------------------------------------===//

def Zero_GroupOp : Zero_Op<"group", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "the ranks a program runs on, and its ZeRO stage over them";
  let description = [{
    States once, for the whole module, how many ranks the program runs on
    and, from `zero-placement` on, which ZeRO stage shards its training
    state over them. Every collective and shard op names the group
    (`over @dp`) and reads the world size from it; `zero-split-batch`
    declares it, `zero-placement` records the stage, and lowering turns it
    into the program's declaration (`zrt.declare_program`).

    ```mlir
    zero.group @dp world_size(4) stage(3)
    ```

    With hybrid sharding (`--shard-group-size=G`) the ranks form a mesh of
    W/G replicas by G shards, and `zero-placement` declares its two axes as
    subgroups `of @dp`: `@shard`, the G consecutive ranks a rank shards its
    state with, and `@replica`, the W/G ranks that hold the same shards
    (rank r is number r mod G of its shard group and r div G of its replica
    group). Sharded state is placed `over @shard`, its gathers and
    reduce-scatters run over `@shard`, and the gradient shards are
    all-reduced over `@replica`.

    ```mlir
    zero.group @dp world_size(4) stage(3)
    zero.group @shard world_size(2) axis(shard) of @dp
    zero.group @replica world_size(2) axis(replica) of @dp
    ```

    Constraints:
    - (C1) `world_size` is at least 1.
    - (C2) `stage`, when set, is 0, 1, 2 or 3.
    - (C3) A subgroup (`axis`) names a zero.group without an axis `of` which
      it is one; its world size divides that group's. The group without an
      axis has no `of`.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$world_size,
                       OptionalAttr<I64Attr>:$stage,
                       OptionalAttr<Zero_MeshAxis>:$axis,
                       OptionalAttr<FlatSymbolRefAttr>:$parent);
  let assemblyFormat = [{
    $sym_name `world_size` `(` $world_size `)` (`stage` `(` $stage^ `)`)?
    (`axis` `(` $axis^ `)`)? (`of` $parent^)? attr-dict
  }];
  let hasVerifier = 1;
}

// The accessors of an op that runs over a zero.group (`over @dp`); ops that
// use them set `extraClassDefinition = Zero_GroupAccessorDefs`.
defvar Zero_GroupAccessors = [{
    /// The group this op runs over (the verifier checked that it exists).
    ::zero::sharding::GroupOp getGroupOp();
    /// The number of ranks of the group.
    int64_t getWorldSize();
}];
defvar Zero_GroupAccessorDefs = [{
  ::zero::sharding::GroupOp $cppClass::getGroupOp() {
    return ::zero::sharding::lookupGroup(getOperation(), getGroupAttr());
  }
  int64_t $cppClass::getWorldSize() { return getGroupOp().getWorldSize(); }
}];

// Collectives read and write memory on every rank of the group, in the same
// order everywhere: they are side-effecting so that no pass reorders,
// duplicates or drops one on some ranks only.
class Zero_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Zero_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<Zero_CollectiveOpInterface>,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        MemoryEffects<[MemRead, MemWrite]>])> {
  let extraClassDeclaration = Zero_GroupAccessors;
  let extraClassDefinition = Zero_GroupAccessorDefs;
}

def Zero_AllGatherOp : Zero_CollectiveOp<"all_gather",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "gathers every rank's shard into the full tensor";
  let description = [{
    Concatenates the 1-D shards of all ranks of `group` and
    returns the first N elements, reshaped to the result type (N elements).

    ```mlir
    %w = zero.all_gather %w_shard over @dp : tensor<95xf32> -> tensor<19x20xf32>
    ```

    Constraints:
    - (C1) `group` names a `zero.group` of the module.
    - (C2) the shard has ceil(N / W) elements, N being the number of
      elements of the result and W the group's world size.
  }];
  let arguments = (ins Zero_Shard:$input, FlatSymbolRefAttr:$group);
  let results = (outs Zero_AnyTensor:$result);
  let assemblyFormat = [{
    $input `over` $group attr-dict `:` type($input) `->` type($result)
  }];
}

def Zero_ReduceScatterOp : Zero_CollectiveOp<"reduce_scatter",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "sums a tensor over all ranks and keeps this rank's shard";
  let description = [{
    Sums `input` elementwise over the ranks of `group` and
    returns this rank's flat, zero-padded shard of the sum.

    ```mlir
    %g_shard = zero.reduce_scatter %g over @dp : tensor<19x20xf32> -> tensor<95xf32>
    ```

    Constraints:
    - (C1) `group` names a `zero.group` of the module.
    - (C2) the result has ceil(N / W) elements, N being the number of
      elements of the input and W the group's world size.
  }];
  let arguments = (ins Zero_AnyTensor:$input, FlatSymbolRefAttr:$group);
  let results = (outs Zero_Shard:$result);
  let assemblyFormat = [{
    $input `over` $group attr-dict `:` type($input) `->` type($result)
  }];
}

def Zero_AllReduceOp : Zero_CollectiveOp<"all_reduce",
    [SameOperandsAndResultType]> {
  let summary = "sums a tensor elementwise over all ranks";
  let description = [{
    Every rank receives the elementwise sum of `input` over the group: the
    data-parallel gradient reduction of stage 0, and the loss.

    ```mlir
    %g = zero.all_reduce %local_g over @dp : tensor<19x20xf32>
    ```

    Constraints:
    - (C1) `group` names a `zero.group` of the module.
  }];
  let arguments = (ins Zero_AnyTensor:$input, FlatSymbolRefAttr:$group);
  let results = (outs Zero_AnyTensor:$result);
  let assemblyFormat = [{
    $input `over` $group attr-dict `:` type($result)
  }];
}

def Zero_LocalShardOp : Zero_Op<"local_shard",
    [Pure, AllElementTypesMatch<["input", "result"]>,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "this rank's shard of a replicated tensor (no communication)";
  let description = [{
    Slices this rank's flat, zero-padded shard out of a tensor that every rank
    holds whole: how stages 1 and 2 hand the optimizer its part of a
    replicated parameter.

    ```mlir
    %p_shard = zero.local_shard %p over @dp : tensor<19x20xf32> -> tensor<95xf32>
    ```

    Constraints:
    - (C1) `group` names a `zero.group` of the module.
    - (C2) the result has ceil(N / W) elements, N being the number of
      elements of the input and W the group's world size.
  }];
  let arguments = (ins Zero_AnyTensor:$input, FlatSymbolRefAttr:$group);
  let results = (outs Zero_Shard:$result);
  let assemblyFormat = [{
    $input `over` $group attr-dict `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = Zero_GroupAccessors;
  let extraClassDefinition = Zero_GroupAccessorDefs;
}

def Zero_ReleaseOp : Zero_Op<"release", [MemoryEffects<[MemFree]>]> {
  let summary = "frees a gathered copy after its last use";
  let description = [{
    Ends the life of a tensor that `zero.all_gather` materialised, so that at
    stage 3 only the parameters in use are held whole. Lowering frees its
    buffer here.

    ```mlir
    zero.release %w : tensor<19x20xf32>
    ```

    Constraints:
    - (C1) the tensor has no use after the release.
  }];
  let arguments = (ins Zero_AnyTensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Offload: the optimizer on the host
//===----------------------------------------------------------------------===//

def Zero_ToHostOp : Zero_Op<"to_host", [Pure, SameOperandsAndResultType]> {
  let summary = "copies a tensor from device memory to host memory";
  let description = [{
    The copy that `zero-offload-optimizer` makes of each device value an
    update on the host reads (a gradient, a parameter without a master, a
    hyperparameter). Ops marked `zero.host` run on the host and read only
    values in host memory: these copies, results of other host ops, and
    arguments placed `in host`.

    ```mlir
    %g_host = zero.to_host %g : tensor<95xf32>
    ```

    Constraints:
    - (C1) the input is in device memory.
  }];
  let arguments = (ins Zero_AnyTensor:$input);
  let results = (outs Zero_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Zero_ToDeviceOp : Zero_Op<"to_device", [Pure, SameOperandsAndResultType]> {
  let summary = "copies a tensor from host memory to device memory";
  let description = [{
    The copy of a new parameter that the host computed to where the device
    reads it (the parameter's argument, or the gather of stages 1-2).

    ```mlir
    %p = zero.to_device %p_host : tensor<95xbf16>
    ```

    Constraints:
    - (C1) the input is in host memory.
  }];
  let arguments = (ins Zero_AnyTensor:$input);
  let results = (outs Zero_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Buckets: many tensors through one collective
//===----------------------------------------------------------------------===//

def Zero_PackOp : Zero_Op<"pack", [Pure]> {
  let summary = "lays tensors out in one flat buffer, chunk by chunk";
  let description = [{
    Packs several tensors into one flat buffer so that one collective moves
    them all (a bucket). Each input of N_i elements is cut into `chunks`
    chunks of C_i = ceil(N_i / chunks) elements (the last one zero-padded);
    the result holds chunk 0 of every input in order, then chunk 1 of every
    input, and so on: `chunks` * sum(C_i) elements.

    With `chunks` = 1 it is a plain concatenation: the shards a rank hands to
    one all-gather of a unit's parameters, or the gradients of one
    all-reduce. With `chunks` = the world size, chunk r of the result is
    what rank r keeps of a reduce-scatter: its shard of every gradient.

    ```mlir
    %bucket = zero.pack %g1, %g2 chunks(2) : tensor<4x5xf32>, tensor<3xf32> -> tensor<24xf32>
    ```

    Constraints:
    - (C1) `chunks` is at least 1.
    - (C2) every input has the result's element type.
    - (C3) the result has `chunks` * sum(ceil(N_i / chunks)) elements.
  }];
  let arguments = (ins Variadic<Zero_AnyTensor>:$inputs, I64Attr:$chunks);
  let results = (outs Zero_Shard:$result);
  let assemblyFormat = [{
    $inputs `chunks` `(` $chunks `)` attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Zero_UnpackOp : Zero_Op<"unpack", [Pure]> {
  let summary = "the tensors a zero.pack laid out, back from a flat buffer";
  let description = [{
    The inverse of `zero.pack` with the same `chunks`: result i (N_i
    elements) is its C_i-element chunk from each of the `chunks` chunks of
    the input, concatenated, without the padding. After an all-gather of
    packed shards (`chunks` = world size) the results are the whole
    parameters; after a reduce-scatter of a packed bucket (`chunks` = 1)
    they are this rank's shard of each gradient.

    ```mlir
    %w, %b = zero.unpack %gathered chunks(2) : tensor<24xf32> -> tensor<4x5xf32>, tensor<3xf32>
    ```

    Constraints:
    - (C1) `chunks` is at least 1.
    - (C2) every result has the input's element type.
    - (C3) the input has `chunks` * sum(ceil(N_i / chunks)) elements.
  }];
  let arguments = (ins Zero_Shard:$input, I64Attr:$chunks);
  let results = (outs Variadic<Zero_AnyTensor>:$results);
  let assemblyFormat = [{
    $input `chunks` `(` $chunks `)` attr-dict `:` type($input) `->` type($results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

class Zero_StartOp<string mnemonic, string blocking, string ioConstraints>
    : Zero_CollectiveOp<mnemonic> {
  let summary = "starts a zero." # blocking # "; zero.wait completes it";
  let description = "The asynchronous form of `zero." # blocking # "`: the "
      # "transfer starts here and runs while the ops between the start and "
      # "its `zero.wait` execute. Collectives start and run in program order "
      # "on every rank.\n\nConstraints:\n"
      # "- (C1) `group` names a `zero.group` of the module.\n"
      # "- (C2) " # ioConstraints # "\n"
      # "- (C3) the future has exactly one use, a `zero.wait`.";
  let results = (outs Zero_FutureType:$future);
  let hasVerifier = 1;
  let extraClassDefinition = Zero_GroupAccessorDefs;
  let extraClassDeclaration = Zero_GroupAccessors # [{
    /// The tensor the collective produces.
    ::mlir::RankedTensorType getValueType() {
      return getFuture().getType().getValueType();
    }
    /// The zero.wait that completes it.
    ::zero::sharding::WaitOp getWait();
  }];
}

def Zero_AllGatherStartOp : Zero_StartOp<"all_gather_start", "all_gather",
    "the shard has ceil(N / W) elements, N being the number of "
    "elements of the future's tensor."> {
  let arguments = (ins Zero_Shard:$input, FlatSymbolRefAttr:$group);
  let assemblyFormat = [{
    $input `over` $group attr-dict `:` type($input) `->` qualified(type($future))
  }];
}

def Zero_ReduceScatterStartOp : Zero_StartOp<"reduce_scatter_start",
    "reduce_scatter",
    "the future's tensor has ceil(N / W) elements, N being the "
    "number of elements of the input."> {
  let arguments = (ins Zero_AnyTensor:$input, FlatSymbolRefAttr:$group);
  let assemblyFormat = [{
    $input `over` $group attr-dict `:` type($input) `->` qualified(type($future))
  }];
}

def Zero_AllReduceStartOp : Zero_StartOp<"all_reduce_start", "all_reduce",
    "the future's tensor has the type of the input."> {
  let arguments = (ins Zero_AnyTensor:$input, FlatSymbolRefAttr:$group);
  let assemblyFormat = [{
    $input `over` $group attr-dict `:` type($input) `->` qualified(type($future))
  }];
}

def Zero_WaitOp : Zero_Op<"wait", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"result is the future's tensor", "future", "result",
                   "::llvm::cast<::zero::sharding::FutureType>($_self).getValueType()">]> {
  let summary = "completes an asynchronous collective and yields its tensor";
  let description = [{
    Blocks until the collective that produced `future` has completed on this
    rank, and yields its tensor.

    ```mlir
    %g_shard = zero.wait %f : !zero.future<tensor<95xf32>>
    ```
  }];
  let arguments = (ins Zero_FutureType:$future);
  let results = (outs Zero_AnyTensor:$result);
  let assemblyFormat = "$future attr-dict `:` qualified(type($future))";
}

#endif // ZERO_ZERO_OPS
