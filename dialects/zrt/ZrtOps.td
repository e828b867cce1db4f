//===- ZrtOps.td - ops of the zrt dialect ------------------*- tablegen -*-===//
//
// One op per entry point of include/zero/zrt.h, with the operands in the
// order of the C function's pointer arguments. What the C function takes
// besides (the context, dtypes, element counts, matrix sizes) comes from the
// buffers' types when zero-lower-zrt-to-calls emits the call, which checks
// each call against the C prototype at compile time (passes/ZrtToCalls.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_ZRT_OPS
#define ZERO_ZRT_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "dialects/zrt/ZrtDialect.td"
include "dialects/zrt/ZrtEnums.td"
include "dialects/zrt/ZrtInterfaces.td"

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Zrt_HandleType : TypeDef<Zrt_Dialect, "Handle"> {
  let mnemonic = "handle";
  let summary = "an asynchronous collective in flight";
  let description = [{
    What a `zrt.*_start` returns and `zrt.wait` completes, exactly once (the
    `int64_t` handle of zrt.h).
  }];
}

// A buffer: the memory of one tensor, with its shape and element type.
def Zrt_Buffer : StaticShapeMemRefOf<[F32, BF16, I32, I128]>;
def Zrt_FloatBuffer : StaticShapeMemRefOf<[F32, BF16]>;
// ZRT_EXACT: the exact accumulators of --deterministic (zrt.h).
def Zrt_ExactBuffer : StaticShapeMemRefOf<[I128]>;
// What fills and collectives move: floats, and exact accumulators (summed
// exactly by the reductions).
def Zrt_SummableBuffer : StaticShapeMemRefOf<[F32, BF16, I128]>;
def Zrt_F32Buffer : StaticShapeMemRefOf<[F32]>;
def Zrt_IdBuffer : StaticShapeMemRefOf<[I32]>;
def Zrt_Matrix : ConfinedType<MemRefRankOf<[F32, BF16], [2]>, [HasStaticShapePred],
    "statically shaped 2-D memref of f32 or bf16", "::mlir::MemRefType">;

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

// Every runtime call reads and writes the runtime's own state (its ledger,
// streams and trace: Zrt_RuntimeState), so no pass may reorder, merge or
// drop one. What it does to its buffers is said per operand, so that a pass
// asks the op (MemoryEffectOpInterface) instead of keeping a table:
//   Zrt_In     read;
//   Zrt_Out    written whole, without being read, on every backend (cuBLAS
//              with beta = 0, one thread an element or a row): its
//              buffer's zero-fill is wasted (zero-elide-zero-fills);
//   Zrt_InOut  read and written: accumulated into, written in part, or
//              written in a way a backend may accumulate into;
//   Zrt_Free   released.
// zrt.fill, zrt.shard_slice and zrt.from_exact write their output whole
// too, but are declared Zrt_InOut: their buffers have always been
// zero-filled first, and eliding those fills is a change of the program for
// a commit of its own.
def Zrt_RuntimeState : Resource<"::zero::zrt::RuntimeStateResource">;
class Zrt_Op<string mnemonic, list<Trait> traits = []>
    : Op<Zrt_Dialect, mnemonic,
         !listconcat(traits, [MemoryEffects<[MemRead<Zrt_RuntimeState>,
                                             MemWrite<Zrt_RuntimeState>]>])>;
class Zrt_In<Constraint buffer> : Arg<buffer, "read", [MemRead]>;
class Zrt_Out<Constraint buffer> : Arg<buffer, "written whole", [MemWrite]>;
class Zrt_InOut<Constraint buffer>
    : Arg<buffer, "read and written", [MemRead, MemWrite]>;
class Zrt_Free<Constraint buffer> : Arg<buffer, "released", [MemFree]>;
class Zrt_CollectiveOutput<bit overwrites>
    : Arg<Zrt_SummableBuffer,
          !if(overwrites, "written whole", "read and written"),
          !if(overwrites, [MemWrite], [MemRead, MemWrite])>;

//===--- Program description ----------------------------------------------===//

def Zrt_DeclareProgramOp : Zrt_Op<"declare_program"> {
  let summary = "declares the program: world size, stage, task, data shape";
  let description = [{
    `zrt_declare_program` (with this compiler's ABI version). `classify`:
    `global_batch` rows of `num_features` floats and `num_classes` classes
    (`seq_len` is 1); `lm`: `global_batch` sequences of `seq_len` tokens,
    ids below `num_classes`.

    ```mlir
    zrt.declare_program world_size 2 stage 3 task lm batch 8 x 64 features 0 classes 50257
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$world_size,
                       ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<3>]>:$stage,
                       Zrt_Task:$task, I64Attr:$global_batch, I64Attr:$seq_len,
                       I64Attr:$num_features, I64Attr:$num_classes);
  let assemblyFormat = [{
    `world_size` $world_size `stage` $stage `task` $task `batch` $global_batch
    `x` $seq_len `features` $num_features `classes` $num_classes attr-dict
  }];
}

def Zrt_DeclareDeterministicOp : Zrt_Op<"declare_deterministic"> {
  let summary = "declares a --deterministic program and its chunk";
  let description = [{
    `zrt_declare_deterministic`: every sum across ranks and micro-batches is
    exact, and the loss the step writes is one `ZRT_EXACT` element, which
    the runtime sums exactly over the micro-batches. `chunk_rows` is what
    each rank computes per micro-batch (examples, or sequences): runs with
    the same chunk give bitwise identical results at every world size and
    stage.

    ```mlir
    zrt.declare_deterministic chunk_rows(2)
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$chunk_rows);
  let assemblyFormat = "`chunk_rows` `(` $chunk_rows `)` attr-dict";
}

def Zrt_DeclareShardGroupsOp : Zrt_Op<"declare_shard_groups"> {
  let summary = "declares hybrid sharding: state sharded over groups of G ranks";
  let description = [{
    `zrt_declare_shard_groups` (`zero-opt --shard-group-size`): the
    arguments declared `sharded` are sharded over groups of `size`
    consecutive ranks and replicated across the groups; collectives `over
    shard` run inside this rank's group, `over replica` across the groups.

    ```mlir
    zrt.declare_shard_groups size(2)
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<2>]>:$size);
  let assemblyFormat = "`size` `(` $size `)` attr-dict";
}

def Zrt_DeclareMicroBatchesOp : Zrt_Op<"declare_micro_batches"> {
  let summary = "declares the micro-batches of one optimizer step";
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$micro_batches);
  let assemblyFormat = "$micro_batches attr-dict";
}

def Zrt_DeclareHfConfigOp : Zrt_Op<"declare_hf_config"> {
  let summary = "declares the Hugging Face config.json of a transformer";
  let description = [{
    `zrt_declare_hf_config`: the config.json (JSON text) that the runtime's
    `--export-hf` writes next to the trained weights, so that transformers'
    `from_pretrained` loads them.

    ```mlir
    zrt.declare_hf_config "{\"model_type\": \"gpt2\", ...}"
    ```
  }];
  let arguments = (ins StrAttr:$json);
  let assemblyFormat = "$json attr-dict";
}

def Zrt_DeclareArgOp : Zrt_Op<"declare_arg"> {
  let summary = "declares one argument of the step";
  let description = [{
    `zrt_declare_arg`: argument `index` is `name`, of role `role`; `type` is
    the whole tensor (at most 4 dimensions) even when the buffer holds only
    this rank's flat shard (`sharded`). A parameter or master copy starts as
    `init` with `init_scale` unless loaded by name.

    ```mlir
    zrt.declare_arg 2 "fc.weight" param sharded init uniform 0.57735 : tensor<3x5xf32>
    ```

    `host` (optimizer offload; moments and masters only): the buffer is in
    host memory, `zrt_declare_host_arg`.
  }];
  let arguments = (ins I64Attr:$index, StrAttr:$name, Zrt_Role:$role,
                       UnitAttr:$sharded, UnitAttr:$host, Zrt_Init:$init,
                       F32Attr:$init_scale, TypeAttrOf<AnyRankedTensor>:$type);
  let assemblyFormat = [{
    $index $name $role (`sharded` $sharded^)? (`host` $host^)? `init` $init
    $init_scale attr-dict `:` $type
  }];
  let hasVerifier = 1;
}

def Zrt_DeclareArenaOp : Zrt_Op<"declare_arena"> {
  let summary = "declares the arena of a memory category";
  let description = [{
    `zrt_declare_arena`: the temporaries of `category` live in one block of
    `bytes`, at the offsets of their `zrt.alloc`s. `zero-plan-memory` adds
    one per category that has temporaries; the runtime reserves the block
    before the first step.

    ```mlir
    zrt.declare_arena activation 1048576
    ```
  }];
  let arguments = (ins Zrt_MemCategory:$category,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$bytes);
  let assemblyFormat = "$category $bytes attr-dict";
}

def Zrt_DeclareSharedArenaOp : Zrt_Op<"declare_shared_arena"> {
  let summary = "declares the one arena that every category's temporaries share";
  let description = [{
    `zrt_declare_arena` with `ZRT_ARENA_SHARED`: the temporaries of every
    category live in one block of `bytes`, at the offsets of their
    `zrt.alloc`s, so that a range one category frees can hold a buffer of
    another (the activations the backward frees hold the gradients it
    makes). `zero-plan-memory` declares it instead of the per-category
    arenas when that plan is smaller; each buffer is still charged to its
    own category in the ledger.

    ```mlir
    zrt.declare_shared_arena 4194304
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$bytes);
  let assemblyFormat = "$bytes attr-dict";
}

def Zrt_DeclareCollectivePlanOp : Zrt_Op<"declare_collective_plan"> {
  let summary = "declares when one collective of the step should run";
  let description = [{
    `zrt_declare_collective_plan`: by `zero-predict-schedule`'s time model,
    collective `sequence` of the step (1, 2, ... in start order over every
    micro-batch, then the apply function) waits `queued_ns` behind the
    collectives started before it, moves its bytes in `transfer_ns`, and
    its wait blocks the compute thread `exposed_ns`. The runtime's
    `--check-schedule` names any collective that began or was waited for
    later than this says.

    ```mlir
    zrt.declare_collective_plan 3 queued 0 transfer 41000 exposed 12000
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$sequence,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$queued_ns,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$transfer_ns,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$exposed_ns);
  let assemblyFormat = [{
    $sequence `queued` $queued_ns `transfer` $transfer_ns `exposed` $exposed_ns
    attr-dict
  }];
}

//===--- Memory ------------------------------------------------------------===//

def Zrt_AllocOp : Zrt_Op<"alloc"> {
  let summary = "a buffer charged to a ledger category, zero-filled unless `unfilled`";
  let description = [{
    `zrt_alloc` of the buffer's bytes. `zero-plan-memory` adds
    `arena_offset`, the buffer's place in its category's arena
    (`zrt.declare_arena`); the buffer is then `zrt_alloc_in_arena` there.
    Memory comes zero-filled (a packed bucket's padding relies on it) unless
    `zero-elide-zero-fills` marked the buffer `unfilled`: its first user
    writes every element before anything reads one, so a planned buffer is
    `zrt_alloc_in_arena_unfilled` and keeps what its range held. (An
    unplanned buffer is filled either way.)

    ```mlir
    %0 = zrt.alloc activation : memref<4x5xf32>
    %1 = zrt.alloc activation {arena_offset = 128 : i64, unfilled} : memref<4x5xf32>
    ```
  }];
  let arguments = (ins Zrt_MemCategory:$category,
                       OptionalAttr<I64Attr>:$arena_offset,
                       UnitAttr:$unfilled);
  let results = (outs Zrt_Buffer:$buffer);
  let assemblyFormat = "$category attr-dict `:` type($buffer)";
  let extraClassDeclaration = [{
    /// The bytes the runtime allocates and charges.
    int64_t getByteSize() { return ::zero::zrt::getByteSize(getBuffer()); }
    /// Whether the runtime zero-fills the buffer as it allocates it.
    bool isZeroFilled() { return !getUnfilled() || !getArenaOffset(); }
  }];
}

def Zrt_FreeOp : Zrt_Op<"free"> {
  let summary = "frees a buffer of zrt.alloc";
  let arguments = (ins Zrt_Free<Zrt_Buffer>:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Zrt_ViewOp : Zrt_Op<"view"> {
  let summary = "a buffer seen with another shape of the same bytes";
  let description = [{
    Where a result takes over the buffer of a value of another type (the
    same number of bytes), the view gives it the result's type. No call:
    the view is the same pointer.
  }];
  let arguments = (ins Zrt_Buffer:$source);
  let results = (outs Zrt_Buffer:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($result)";
  let hasVerifier = 1;
}

def Zrt_CopyOp : Zrt_Op<"copy"> {
  let summary = "copies bytes between two buffers";
  let description = [{
    `zrt_copy` of `bytes` bytes from `src` at byte `src_offset` to `dst` at
    byte `dst_offset` (the members of a packed bucket, a result into its
    argument's buffer).

    ```mlir
    zrt.copy 20 bytes %a[0] to %flat[32] : memref<5xf32>, memref<16xf32>
    ```
  }];
  let arguments = (ins Zrt_In<Zrt_Buffer>:$src, Zrt_InOut<Zrt_Buffer>:$dst,
                       I64Attr:$bytes,
                       DefaultValuedAttr<I64Attr, "0">:$src_offset,
                       DefaultValuedAttr<I64Attr, "0">:$dst_offset);
  let assemblyFormat = [{
    $bytes `bytes` $src `[` $src_offset `]` `to` $dst `[` $dst_offset `]`
    attr-dict `:` type($src) `,` type($dst)
  }];
  let hasVerifier = 1;
}

class Zrt_OffloadCopyOp<string mnemonic, string summaryText, string from,
                        string to> : Zrt_Op<mnemonic, [AllTypesMatch<["src", "dst"]>]> {
  let summary = summaryText;
  let description = "`zrt_" # mnemonic # "`: the bytes of `src`, in " # from #
      " memory, into `dst`, in " # to # " memory (optimizer offload).";
  let arguments = (ins Zrt_In<Zrt_Buffer>:$src, Zrt_Out<Zrt_Buffer>:$dst);
  let assemblyFormat = "$src `to` $dst attr-dict `:` type($src)";
  let extraClassDeclaration = [{
    int64_t getByteSize() { return ::zero::zrt::getByteSize(getSrc()); }
  }];
  let hasVerifier = 1;
}

def Zrt_CopyToHostOp : Zrt_OffloadCopyOp<"copy_to_host",
    "copies a buffer from device memory to host memory", "device", "host">;
def Zrt_CopyToDeviceOp : Zrt_OffloadCopyOp<"copy_to_device",
    "copies a buffer from host memory to device memory", "host", "device">;

def Zrt_HostTaskBeginOp : Zrt_Op<"host_task_begin"> {
  let summary = "opens a host task: the host update that follows is queued";
  let description = [{
    `zrt_host_task_begin`. Until `zrt.host_task_end`, the runtime queues
    `zrt.adamw on_host`, `zrt.cast on_host` and `zrt.copy_to_device` for its
    host-task thread instead of running them. On a device the task first
    waits for a fence taken here (the copies to the host queued before, and
    the last kernels reading the buffer it writes), and its upload runs on
    a copy stream. zero-overlap-offload brackets each parameter's update
    so.
  }];
  let assemblyFormat = "attr-dict";
}

def Zrt_HostTaskEndOp : Zrt_Op<"host_task_end"> {
  let summary = "closes a host task, naming the device buffer it writes";
  let description = [{
    `zrt_host_task_end`: the task opened by `zrt.host_task_begin` ends with
    its upload into `writes`; `zrt.host_wait` on that buffer waits for it.
  }];
  let arguments = (ins Zrt_InOut<Zrt_Buffer>:$writes);
  let assemblyFormat = "`writes` $writes attr-dict `:` type($writes)";
}

def Zrt_HostWaitOp : Zrt_Op<"host_wait"> {
  let summary = "waits for the host task that writes a device buffer";
  let description = [{
    `zrt_host_wait`: blocks until the host task that writes `buffer` has
    run (at once when none is pending: the first step, a run without the
    host-task thread); on a device, the kernels queued after it also wait
    for the task's upload.
  }];
  let arguments = (ins Zrt_InOut<Zrt_Buffer>:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
}

def Zrt_HostWaitAllOp : Zrt_Op<"host_wait_all"> {
  let summary = "waits for every queued host task";
  let description = [{
    `zrt_host_wait_all`: before a step's first copy into host memory, whose
    buffers the previous step's tasks read: every task has run and, on a
    device, every upload has arrived.
  }];
  let assemblyFormat = "attr-dict";
}

def Zrt_FillOp : Zrt_Op<"fill", [Zrt_KernelOpInterface]> {
  let summary = "sets every element of a buffer to a value";
  let arguments = (ins Zrt_InOut<Zrt_SummableBuffer>:$dst, F32Attr:$value);
  let assemblyFormat = "$dst `with` $value attr-dict `:` type($dst)";
}

def Zrt_CastOp : Zrt_Op<"cast", [Zrt_KernelOpInterface]> {
  let summary = "converts a buffer's elements to another float type";
  let description = [{
    `zrt_cast`; with `on_host`, `zrt_host_cast` (host buffers, the host's
    CPU: the new master's cast to a bf16 parameter under optimizer offload).
  }];
  let arguments = (ins Zrt_In<Zrt_FloatBuffer>:$src,
                       Zrt_Out<Zrt_FloatBuffer>:$dst, UnitAttr:$on_host);
  let assemblyFormat = [{
    $src `->` $dst (`on_host` $on_host^)? attr-dict `:` type($src) `->` type($dst)
  }];
  let hasVerifier = 1;
}

def Zrt_ShardSliceOp : Zrt_Op<"shard_slice", [Zrt_KernelOpInterface]> {
  let summary = "this rank's zero-padded flat shard of a whole buffer";
  let arguments = (ins Zrt_In<Zrt_FloatBuffer>:$full,
                       Zrt_InOut<Zrt_FloatBuffer>:$shard);
  let assemblyFormat = "$full `->` $shard attr-dict `:` type($full) `->` type($shard)";
  let hasVerifier = 1;
}

//===--- Kernels -----------------------------------------------------------===//

def Zrt_MatmulOp : Zrt_Op<"matmul", [Zrt_KernelWithFlops]> {
  let summary = "c = op(a) op(b)";
  let description = [{
    `zrt_matmul`: `a` is m x k (stored k x m with `transpose_a`), `b` is
    k x n (stored n x k with `transpose_b`), `c` is m x n.
  }];
  let arguments = (ins Zrt_In<Zrt_Matrix>:$a, Zrt_In<Zrt_Matrix>:$b,
                       Zrt_Out<Zrt_Matrix>:$c, UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b);
  let assemblyFormat = [{
    $a `,` $b `->` $c attr-dict `:` type($a) `,` type($b) `->` type($c)
  }];
  let hasVerifier = 1;
}

def Zrt_MatmulBiasOp : Zrt_Op<"matmul_bias", [Zrt_KernelWithFlops]> {
  let summary = "a linear layer: c = epilogue(op(a) op(b) + bias)";
  let description = [{
    `zrt_matmul_bias`: `zrt.matmul`'s product plus `bias` on every row, then
    the epilogue. With `bias_gelu` the sum before GELU is written to
    `pre_activation`, which only that epilogue has.
  }];
  let arguments = (ins Zrt_In<Zrt_Matrix>:$a, Zrt_In<Zrt_Matrix>:$b,
                       Zrt_In<Zrt_FloatBuffer>:$bias, Zrt_Out<Zrt_Matrix>:$c,
                       Zrt_Out<Optional<Zrt_Matrix>>:$pre_activation,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       Zrt_Epilogue:$epilogue);
  let assemblyFormat = [{
    $a `,` $b `,` $bias `->` $c (`pre` $pre_activation^)? `epilogue` $epilogue
    attr-dict `:` type($a) `,` type($b) `,` type($bias) `->` type($c)
    (`,` type($pre_activation)^)?
  }];
  let hasVerifier = 1;
}

// y[r,c] = x[r,c] op v[c], and ops of that shape.
class Zrt_RowsOp<string mnemonic, string summaryText>
    : Zrt_Op<mnemonic, [Zrt_KernelOpInterface, AllTypesMatch<["x", "y"]>]> {
  let summary = summaryText;
  let arguments = (ins Zrt_In<Zrt_Matrix>:$x, Zrt_In<Zrt_FloatBuffer>:$bias,
                       Zrt_Out<Zrt_Matrix>:$y);
  let assemblyFormat = "$x `,` $bias `->` $y attr-dict `:` type($x) `,` type($bias)";
  let hasVerifier = 1;
}
def Zrt_BiasAddOp : Zrt_RowsOp<"bias_add", "y[r,c] = x[r,c] + bias[c]">;

def Zrt_SumRowsOp : Zrt_Op<"sum_rows", [Zrt_KernelOpInterface]> {
  let summary = "y[c] = sum over rows of x[r,c]";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$x, Zrt_InOut<Zrt_FloatBuffer>:$y);
  let assemblyFormat = "$x `->` $y attr-dict `:` type($x) `->` type($y)";
  let hasVerifier = 1;
}

def Zrt_AddOp : Zrt_Op<"add", [
    Zrt_KernelOpInterface,
    AllTypesMatch<["a", "b", "y"]>]> {
  let summary = "y = a + b elementwise";
  let arguments = (ins Zrt_In<Zrt_FloatBuffer>:$a, Zrt_In<Zrt_FloatBuffer>:$b,
                       Zrt_Out<Zrt_FloatBuffer>:$y);
  let assemblyFormat = "$a `,` $b `->` $y attr-dict `:` type($y)";
}

class Zrt_UnaryOp<string mnemonic, string summaryText>
    : Zrt_Op<mnemonic, [Zrt_KernelOpInterface, AllTypesMatch<["x", "y"]>]> {
  let summary = summaryText;
  let arguments = (ins Zrt_In<Zrt_FloatBuffer>:$x, Zrt_Out<Zrt_FloatBuffer>:$y);
  let assemblyFormat = "$x `->` $y attr-dict `:` type($y)";
}
def Zrt_ReluOp : Zrt_UnaryOp<"relu", "y = max(x, 0)">;
def Zrt_GeluOp : Zrt_UnaryOp<"gelu", "GELU, tanh approximation">;

class Zrt_UnaryGradOp<string mnemonic, string summaryText>
    : Zrt_Op<mnemonic, [Zrt_KernelOpInterface,
                        AllTypesMatch<["x", "dy", "dx"]>]> {
  let summary = summaryText;
  let arguments = (ins Zrt_In<Zrt_FloatBuffer>:$x, Zrt_In<Zrt_FloatBuffer>:$dy,
                       Zrt_Out<Zrt_FloatBuffer>:$dx);
  let assemblyFormat = "$x `,` $dy `->` $dx attr-dict `:` type($dx)";
}
def Zrt_ReluGradOp : Zrt_UnaryGradOp<"relu_grad", "dx = dy * (x > 0)">;
def Zrt_GeluGradOp : Zrt_UnaryGradOp<"gelu_grad", "the gradient of zrt.gelu">;

def Zrt_SwigluOp : Zrt_Op<"swiglu", [
    Zrt_KernelOpInterface,
    AllTypesMatch<["gate", "up", "y"]>]> {
  let summary = "y = silu(gate) * up";
  let arguments = (ins Zrt_In<Zrt_FloatBuffer>:$gate,
                       Zrt_In<Zrt_FloatBuffer>:$up,
                       Zrt_Out<Zrt_FloatBuffer>:$y);
  let assemblyFormat = "$gate `,` $up `->` $y attr-dict `:` type($y)";
}

def Zrt_SwigluGradOp : Zrt_Op<"swiglu_grad",
    [Zrt_KernelOpInterface,
     AllTypesMatch<["gate", "up", "dy", "dgate", "dup"]>]> {
  let summary = "the gradients of zrt.swiglu";
  let arguments = (ins Zrt_In<Zrt_FloatBuffer>:$gate,
                       Zrt_In<Zrt_FloatBuffer>:$up,
                       Zrt_In<Zrt_FloatBuffer>:$dy,
                       Zrt_Out<Zrt_FloatBuffer>:$dgate,
                       Zrt_Out<Zrt_FloatBuffer>:$dup);
  let assemblyFormat = [{
    $gate `,` $up `,` $dy `->` $dgate `,` $dup attr-dict `:` type($dy)
  }];
}

def Zrt_SoftmaxXentOp : Zrt_Op<"softmax_xent", [Zrt_KernelOpInterface]> {
  let summary = "the cross-entropy of softmax(logits) summed, over divisor";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$logits, Zrt_In<Zrt_IdBuffer>:$labels,
                       Zrt_InOut<Zrt_F32Buffer>:$loss, F32Attr:$divisor);
  let assemblyFormat = [{
    $logits `,` $labels `->` $loss `divisor` $divisor attr-dict `:`
    type($logits) `,` type($labels) `->` type($loss)
  }];
  let hasVerifier = 1;
}

def Zrt_SoftmaxXentGradOp : Zrt_Op<"softmax_xent_grad",
    [Zrt_KernelOpInterface, AllTypesMatch<["logits", "dlogits"]>]> {
  let summary = "the gradient of zrt.softmax_xent";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$logits,
                       Zrt_In<Zrt_IdBuffer>:$labels,
                       Zrt_In<Zrt_F32Buffer>:$dloss,
                       Zrt_Out<Zrt_Matrix>:$dlogits, F32Attr:$divisor);
  let assemblyFormat = [{
    $logits `,` $labels `,` $dloss `->` $dlogits `divisor` $divisor attr-dict
    `:` type($logits) `,` type($labels) `,` type($dloss)
  }];
  let hasVerifier = 1;
}

def Zrt_SoftmaxXentFusedOp : Zrt_Op<"softmax_xent_fused",
    [Zrt_KernelOpInterface, AllTypesMatch<["logits", "dlogits"]>]> {
  let summary = "the loss and its gradient in one pass over the logits";
  let description = [{
    `zrt_softmax_xent_fused`: `loss` as `zrt.softmax_xent` and `dlogits` as
    `zrt.softmax_xent_grad` with `dloss`, bit for bit, each row's
    log-sum-exp computed once. `zero-lower-to-zrt` uses it where the step
    reads the loss only after its gradient.

    ```mlir
    zrt.softmax_xent_fused %logits, %labels, %dloss -> %loss, %dlogits divisor 64.0 : memref<64x50257xbf16>, memref<64xi32>, memref<f32>, memref<f32>
    ```
  }];
  let arguments = (ins Zrt_In<Zrt_Matrix>:$logits,
                       Zrt_In<Zrt_IdBuffer>:$labels,
                       Zrt_In<Zrt_F32Buffer>:$dloss,
                       Zrt_InOut<Zrt_F32Buffer>:$loss,
                       Zrt_Out<Zrt_Matrix>:$dlogits, F32Attr:$divisor);
  let assemblyFormat = [{
    $logits `,` $labels `,` $dloss `->` $loss `,` $dlogits `divisor` $divisor
    attr-dict `:` type($logits) `,` type($labels) `,` type($dloss) `,`
    type($loss)
  }];
  let hasVerifier = 1;
}

def Zrt_EmbeddingOp : Zrt_Op<"embedding", [Zrt_KernelOpInterface]> {
  let summary = "out[i,:] = table[ids[i],:]";
  let arguments = (ins Zrt_In<Zrt_IdBuffer>:$ids, Zrt_In<Zrt_Matrix>:$table,
                       Zrt_Out<Zrt_Matrix>:$out);
  let assemblyFormat = [{
    $ids `,` $table `->` $out attr-dict `:` type($ids) `,` type($table) `->` type($out)
  }];
  let hasVerifier = 1;
}

def Zrt_EmbeddingGradOp : Zrt_Op<"embedding_grad", [Zrt_KernelOpInterface]> {
  let summary = "dtable[ids[i],:] += dout[i,:] from zero";
  let arguments = (ins Zrt_In<Zrt_IdBuffer>:$ids, Zrt_In<Zrt_Matrix>:$dout,
                       Zrt_InOut<Zrt_Matrix>:$dtable);
  let assemblyFormat = [{
    $ids `,` $dout `->` $dtable attr-dict `:` type($ids) `,` type($dout) `->` type($dtable)
  }];
  let hasVerifier = 1;
}

def Zrt_LayerNormOp : Zrt_Op<"layer_norm", [Zrt_KernelOpInterface,
                                            AllTypesMatch<["x", "y"]>,
                                           AllTypesMatch<["gamma", "beta"]>]> {
  let summary = "row-wise LayerNorm";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$x, Zrt_In<Zrt_FloatBuffer>:$gamma,
                       Zrt_In<Zrt_FloatBuffer>:$beta, Zrt_Out<Zrt_Matrix>:$y,
                       F32Attr:$epsilon);
  let assemblyFormat = [{
    $x `,` $gamma `,` $beta `->` $y `epsilon` $epsilon attr-dict `:` type($x) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Zrt_LayerNormGradOp : Zrt_Op<"layer_norm_grad",
    [Zrt_KernelOpInterface,
     AllTypesMatch<["x", "dy", "dx"]>,
     AllTypesMatch<["gamma", "dgamma", "dbeta"]>]> {
  let summary = "the gradients of zrt.layer_norm";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$x, Zrt_In<Zrt_FloatBuffer>:$gamma,
                       Zrt_In<Zrt_Matrix>:$dy, Zrt_Out<Zrt_Matrix>:$dx,
                       Zrt_InOut<Zrt_FloatBuffer>:$dgamma,
                       Zrt_InOut<Zrt_FloatBuffer>:$dbeta, F32Attr:$epsilon);
  let assemblyFormat = [{
    $x `,` $gamma `,` $dy `->` $dx `,` $dgamma `,` $dbeta `epsilon` $epsilon
    attr-dict `:` type($x) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Zrt_RmsNormOp : Zrt_Op<"rms_norm", [
    Zrt_KernelOpInterface,
    AllTypesMatch<["x", "y"]>]> {
  let summary = "row-wise RMSNorm";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$x, Zrt_In<Zrt_FloatBuffer>:$gamma,
                       Zrt_Out<Zrt_Matrix>:$y, F32Attr:$epsilon);
  let assemblyFormat = [{
    $x `,` $gamma `->` $y `epsilon` $epsilon attr-dict `:` type($x) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Zrt_RmsNormGradOp : Zrt_Op<"rms_norm_grad",
    [Zrt_KernelOpInterface,
     AllTypesMatch<["x", "dy", "dx"]>,
     AllTypesMatch<["gamma", "dgamma"]>]> {
  let summary = "the gradients of zrt.rms_norm";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$x, Zrt_In<Zrt_FloatBuffer>:$gamma,
                       Zrt_In<Zrt_Matrix>:$dy, Zrt_Out<Zrt_Matrix>:$dx,
                       Zrt_InOut<Zrt_FloatBuffer>:$dgamma, F32Attr:$epsilon);
  let assemblyFormat = [{
    $x `,` $gamma `,` $dy `->` $dx `,` $dgamma `epsilon` $epsilon attr-dict
    `:` type($x) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def Zrt_RopeOp : Zrt_Op<"rope", [
    Zrt_KernelOpInterface,
    AllTypesMatch<["x", "y"]>]> {
  let summary = "rotary position embedding by a table of frequencies";
  let description = [{
    `zrt_rope` on `x` = [batch * `seq_len`, `num_heads` * head_dim] with the
    head_dim / 2 `inv_freq` the compiler computed (nn.rope); `inverse`
    rotates back (the gradient).
  }];
  let arguments = (ins Zrt_In<Zrt_Matrix>:$x, Zrt_Out<Zrt_Matrix>:$y,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$seq_len,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_heads,
                       DenseF32ArrayAttr:$inv_freq, UnitAttr:$inverse);
  let assemblyFormat = [{
    $x `->` $y `seq_len` $seq_len `heads` $num_heads `inv_freq` $inv_freq
    attr-dict `:` type($y)
  }];
  let hasVerifier = 1;
}

def Zrt_AttentionOp : Zrt_Op<"attention", [Zrt_KernelWithFlops,
                                           AllTypesMatch<["q", "out"]>,
                                           AllTypesMatch<["k", "v"]>]> {
  let summary = "causal grouped-query attention";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$q, Zrt_In<Zrt_Matrix>:$k,
                       Zrt_In<Zrt_Matrix>:$v, Zrt_Out<Zrt_Matrix>:$out,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$seq_len,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_heads,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_kv_heads);
  let assemblyFormat = [{
    $q `,` $k `,` $v `->` $out `seq_len` $seq_len `heads` $num_heads `kv_heads`
    $num_kv_heads attr-dict `:` type($q) `,` type($k)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getHeadDim() {
      return getQ().getType().getShape()[1] / getNumHeads();
    }
  }];
}

def Zrt_AttentionGradOp : Zrt_Op<"attention_grad",
    [Zrt_KernelWithFlops,
     AllTypesMatch<["q", "dout", "dq"]>,
     AllTypesMatch<["k", "v", "dk", "dv"]>]> {
  let summary = "the gradients of zrt.attention";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$q, Zrt_In<Zrt_Matrix>:$k,
                       Zrt_In<Zrt_Matrix>:$v, Zrt_In<Zrt_Matrix>:$dout,
                       Zrt_InOut<Zrt_Matrix>:$dq, Zrt_InOut<Zrt_Matrix>:$dk,
                       Zrt_InOut<Zrt_Matrix>:$dv,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$seq_len,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_heads,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_kv_heads);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $dout `->` $dq `,` $dk `,` $dv `seq_len` $seq_len
    `heads` $num_heads `kv_heads` $num_kv_heads attr-dict `:` type($q) `,` type($k)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getHeadDim() {
      return getQ().getType().getShape()[1] / getNumHeads();
    }
  }];
}

def Zrt_SliceColsOp : Zrt_Op<"slice_cols", [Zrt_KernelOpInterface]> {
  let summary = "y[r, :] = x[r, offset : offset + width of y]";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$x, Zrt_Out<Zrt_Matrix>:$y,
                       I64Attr:$offset);
  let assemblyFormat = [{
    $x `[` $offset `]` `->` $y attr-dict `:` type($x) `->` type($y)
  }];
  let hasVerifier = 1;
}

def Zrt_SliceColsGradOp : Zrt_Op<"slice_cols_grad", [Zrt_KernelOpInterface]> {
  let summary = "dx = 0 but for dx[r, offset : offset + width of dy] = dy";
  let arguments = (ins Zrt_In<Zrt_Matrix>:$dy, Zrt_InOut<Zrt_Matrix>:$dx,
                       I64Attr:$offset);
  let assemblyFormat = [{
    $dy `->` $dx `[` $offset `]` attr-dict `:` type($dy) `->` type($dx)
  }];
  let hasVerifier = 1;
}

def Zrt_SumSquaresOp : Zrt_Op<"sum_squares", [Zrt_KernelOpInterface]> {
  let summary = "out[0] = sum of x[i]^2, in float32";
  let arguments = (ins Zrt_In<Zrt_FloatBuffer>:$x,
                       Zrt_InOut<Zrt_F32Buffer>:$out);
  let assemblyFormat = "$x `->` $out attr-dict `:` type($x) `->` type($out)";
}

def Zrt_AccumulateExactOp : Zrt_Op<"accumulate_exact", [
    Zrt_KernelOpInterface]> {
  let summary = "acc[i] += exact(x[i])";
  let description = [{
    `zrt_accumulate_exact`: adds the float buffer `x` into the exact
    accumulator `acc` (in place), element by element.
  }];
  let arguments = (ins Zrt_In<Zrt_FloatBuffer>:$x,
                       Zrt_InOut<Zrt_ExactBuffer>:$acc);
  let assemblyFormat = "$x `into` $acc attr-dict `:` type($x) `into` type($acc)";
  let hasVerifier = 1;
}

def Zrt_SumSquaresExactOp : Zrt_Op<"sum_squares_exact", [
    Zrt_KernelOpInterface]> {
  let summary = "acc[0] += sum of exact(x[i]^2)";
  let arguments = (ins Zrt_In<Zrt_FloatBuffer>:$x,
                       Zrt_InOut<Zrt_ExactBuffer>:$acc);
  let assemblyFormat = "$x `into` $acc attr-dict `:` type($x) `into` type($acc)";
  let hasVerifier = 1;
}

def Zrt_FromExactOp : Zrt_Op<"from_exact", [Zrt_KernelOpInterface]> {
  let summary = "out[i] = the float32 nearest to exact[i]";
  let arguments = (ins Zrt_In<Zrt_ExactBuffer>:$exact,
                       Zrt_InOut<Zrt_F32Buffer>:$out);
  let assemblyFormat = "$exact `->` $out attr-dict `:` type($exact) `->` type($out)";
  let hasVerifier = 1;
}

def Zrt_WatchGradientOp : Zrt_Op<"watch_gradient"> {
  let summary = "shows the runtime a gradient's squared norm, by name";
  let description = [{
    `zrt_watch_gradient`: `sum_squares` (one element, just written by
    `zrt.sum_squares`) is this rank's part of the squared norm of the
    gradient of parameter `param`. The runtime ignores it unless the run has
    `--check-finite`: then it reads the value, and when the step's gradient
    norm is not finite it names the first parameter, in this order, whose
    part is not finite on some rank.

    ```mlir
    zrt.watch_gradient %sq of "h.0.mlp.c_fc.weight" : memref<f32>
    ```
  }];
  let arguments = (ins Zrt_In<Zrt_F32Buffer>:$sum_squares, StrAttr:$param);
  let assemblyFormat = "$sum_squares `of` $param attr-dict `:` type($sum_squares)";
  let hasVerifier = 1;
}

def Zrt_ClipCoefficientOp : Zrt_Op<"clip_coefficient"> {
  let summary = "min(1, max_norm / (sqrt(total_sq) + 1e-6))";
  let arguments = (ins Zrt_In<Zrt_F32Buffer>:$total_sq,
                       Zrt_In<Zrt_F32Buffer>:$max_norm,
                       Zrt_InOut<Zrt_F32Buffer>:$coefficient);
  let assemblyFormat = [{
    $total_sq `,` $max_norm `->` $coefficient attr-dict `:` type($total_sq) `,`
    type($max_norm) `->` type($coefficient)
  }];
}

def Zrt_AdamWOp : Zrt_Op<"adamw", [Zrt_KernelOpInterface,
    AllTypesMatch<["param", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>,
    AllTypesMatch<["lr", "step", "beta1", "beta2", "eps", "weight_decay"]>]> {
  let summary = "one AdamW update of float32 parameters and moments";
  let description = [{
    `zrt_adamw`: the gradient `grad` (its type sets the dtype), scaled by
    `grad_scale` when present, updates `param`, `exp_avg` and `exp_avg_sq`
    into the `new_*` buffers (in place when they are the same). The
    hyperparameters are one-element buffers that the runtime fills. With
    `on_host`, `zrt_host_adamw`: every buffer is in host memory and the
    host's CPU runs the update (optimizer offload).
  }];
  let arguments = (ins Zrt_In<Zrt_F32Buffer>:$param,
                       Zrt_In<Zrt_FloatBuffer>:$grad,
                       Zrt_In<Zrt_F32Buffer>:$exp_avg,
                       Zrt_In<Zrt_F32Buffer>:$exp_avg_sq,
                       Zrt_Out<Zrt_F32Buffer>:$new_param,
                       Zrt_Out<Zrt_F32Buffer>:$new_exp_avg,
                       Zrt_Out<Zrt_F32Buffer>:$new_exp_avg_sq,
                       Zrt_In<Zrt_F32Buffer>:$lr, Zrt_In<Zrt_F32Buffer>:$step,
                       Zrt_In<Zrt_F32Buffer>:$beta1,
                       Zrt_In<Zrt_F32Buffer>:$beta2,
                       Zrt_In<Zrt_F32Buffer>:$eps,
                       Zrt_In<Zrt_F32Buffer>:$weight_decay,
                       Zrt_In<Optional<Zrt_F32Buffer>>:$grad_scale,
                       UnitAttr:$on_host);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `->` $new_param `,`
    $new_exp_avg `,` $new_exp_avg_sq `lr` $lr `step` $step `beta1` $beta1
    `beta2` $beta2 `eps` $eps `weight_decay` $weight_decay
    (`scale` $grad_scale^)? (`on_host` $on_host^)? attr-dict `:` type($param)
    `,` type($grad) `,` type($lr) (`,` type($grad_scale)^)?
  }];
  let hasVerifier = 1;
}

def Zrt_LionOp : Zrt_Op<"lion", [Zrt_KernelOpInterface,
    AllTypesMatch<["param", "exp_avg", "new_param", "new_exp_avg"]>,
    AllTypesMatch<["lr", "beta1", "beta2", "weight_decay"]>]> {
  let summary = "one Lion update of float32 parameters and momentum";
  let description = [{
    `zrt_lion`: the gradient `grad` (its type sets the dtype), scaled by
    `grad_scale` when present, updates `param` and `exp_avg` into the
    `new_*` buffers (in place when they are the same). The hyperparameters
    are one-element buffers that the runtime fills.
  }];
  let arguments = (ins Zrt_In<Zrt_F32Buffer>:$param,
                       Zrt_In<Zrt_FloatBuffer>:$grad,
                       Zrt_In<Zrt_F32Buffer>:$exp_avg,
                       Zrt_Out<Zrt_F32Buffer>:$new_param,
                       Zrt_Out<Zrt_F32Buffer>:$new_exp_avg,
                       Zrt_In<Zrt_F32Buffer>:$lr,
                       Zrt_In<Zrt_F32Buffer>:$beta1,
                       Zrt_In<Zrt_F32Buffer>:$beta2,
                       Zrt_In<Zrt_F32Buffer>:$weight_decay,
                       Zrt_In<Optional<Zrt_F32Buffer>>:$grad_scale);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `->` $new_param `,` $new_exp_avg `lr` $lr
    `beta1` $beta1 `beta2` $beta2 `weight_decay` $weight_decay
    (`scale` $grad_scale^)? attr-dict `:` type($param) `,` type($grad) `,`
    type($lr) (`,` type($grad_scale)^)?
  }];
  let hasVerifier = 1;
}

//===--- Collectives -------------------------------------------------------===//

// The blocking collective `mnemonic` and its asynchronous form
// `mnemonic`_start, which returns the handle zrt.wait completes.
class Zrt_CollectiveOp<string mnemonic, string kind, string summaryText,
                       string whole, string shard, bit overwrites>
    : Zrt_Op<mnemonic, [Zrt_CollectiveOpInterface]> {
  let summary = summaryText;
  // `label`: the tensor or bucket moved ("fc1.weight", "bucket of 4: ..."),
  // which the runtime's watchdog names when the collective stalls.
  // `group`: the ranks it runs over (`over shard`, `over replica`; every
  // rank when not printed).
  let arguments = (ins Zrt_In<Zrt_SummableBuffer>:$input,
                       Zrt_CollectiveOutput<overwrites>:$output,
                       DefaultValuedAttr<Zrt_Group, "::zero::zrt::Group::World">:$group,
                       OptionalAttr<I64Attr>:$staging_offset,
                       OptionalAttr<StrAttr>:$label);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::zrt_collective getCollectiveKind() { return }] # kind # [{; }
    int64_t getWholeElements() { return ::zero::zrt::getNumElements(}] # whole # [{); }
    int64_t getShardElements() { return ::zero::zrt::getNumElements(}] # shard # [{); }
  }];
}
class Zrt_BlockingCollectiveOp<string mnemonic, string kind, string summaryText,
                               string whole, string shard, bit overwrites>
    : Zrt_CollectiveOp<mnemonic, kind, summaryText, whole, shard, overwrites> {
  let assemblyFormat = [{
    $input `->` $output (`over` $group^)? (`of` $label^)? attr-dict `:`
    type($input) `->` type($output)
  }];
}
class Zrt_StartCollectiveOp<string mnemonic, string kind, string summaryText,
                            string whole, string shard, bit overwrites>
    : Zrt_CollectiveOp<mnemonic # "_start", kind, summaryText # ", started",
                       whole, shard, overwrites> {
  let results = (outs Zrt_HandleType:$handle);
  let assemblyFormat = [{
    $input `->` $output (`over` $group^)? (`of` $label^)? attr-dict `:`
    type($input) `->` type($output)
  }];
}

// `overwrites`: every rank's part lands in the whole output (a padded
// gather copies exactly the whole out of its staging), and nothing reads it
// before the wait: Zrt_Out. A reduction's output is Zrt_InOut.
multiclass Zrt_Collective<string mnemonic, string kind, string summaryText,
                          string whole, string shard, bit overwrites = 0> {
  def Op : Zrt_BlockingCollectiveOp<mnemonic, kind, summaryText, whole, shard,
                                    overwrites>;
  def StartOp : Zrt_StartCollectiveOp<mnemonic, kind, summaryText, whole,
                                      shard, overwrites>;
}

defm Zrt_AllGather : Zrt_Collective<"all_gather", "ZRT_ALL_GATHER",
    "gathers every rank's shard into the whole buffer", "getOutput()",
    "getInput()", /*overwrites=*/1>;
defm Zrt_ReduceScatter : Zrt_Collective<"reduce_scatter",
    "ZRT_REDUCE_SCATTER", "sums a buffer over the ranks, keeps this rank's shard",
    "getInput()", "getOutput()">;
defm Zrt_AllReduce : Zrt_Collective<"all_reduce", "ZRT_ALL_REDUCE",
    "sums a buffer over the ranks", "getInput()", "getInput()">;

def Zrt_WaitOp : Zrt_Op<"wait"> {
  let summary = "completes a started collective";
  let arguments = (ins Zrt_HandleType:$handle);
  let assemblyFormat = "$handle attr-dict";
}

#endif // ZERO_ZRT_OPS
