//===- Transforms/Passes.td - the program's transforms ----*- tablegen -*-===//
//
// The training program's transforms: from @forward, through the sharded
// @train_step on tensors, to the planned zrt program on buffers.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_TRANSFORMS_PASSES
#define ZERO_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def SplitBatch : Pass<"zero-split-batch", "::mlir::ModuleOp"> {
  let summary = "Splits the batch of @forward across the data-parallel ranks";
  let description = [{
    Input: `@forward` written for the global batch. Output: the same function
    for one rank's rows: the leading dimension of every data argument (any
    argument without `nn.param`) is divided by `world-size`, result shapes
    are re-derived, and each `nn.softmax_cross_entropy` gets
    `divisor = <global batch>` so that the sum of all ranks' losses is the
    global mean. The arguments get `zero.placement = #zero.placement<data,
    sharded>`. With `world-size=1` only the divisor and placement are added.
    Fails when the global batch does not divide by the world size.

    It also states the world size once for the whole module:
    `zero.group @dp world_size(N)`, the group every later pass and every
    collective (`over @dp`) reads it from.
  }];
  let options = [
    Option<"worldSize", "world-size", "int64_t", "1",
           "Number of data-parallel ranks">,
    Option<"microBatches", "micro-batches", "int64_t", "1",
           "Micro-batches accumulated per optimizer step: the loss divides "
           "by the batch of all of them">,
  ];
  let dependentDialects = ["::zero::sharding::ZeroDialect"];
}

def Autodiff : Pass<"nn-autodiff", "::mlir::ModuleOp"> {
  let summary = "Builds the backward pass: @forward becomes @train_step";
  let description = [{
    Input: `@forward`, an `nn` function whose only result is the scalar loss.
    Output: `@train_step` with the same arguments, returning the loss
    followed by the gradient of the loss with respect to every `nn.param`
    argument, in argument order (each gradient result carries
    `nn.grad_of = <argument index>`). The backward ops are emitted in reverse
    order of the forward ops by each op's DifferentiableOpInterface; the
    gradients of a value with several uses are summed with `nn.add`. An op on
    the path to the loss without a gradient rule is an error.
  }];
  let dependentDialects = ["::zero::nn::NNDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numBackwardOps", "backward-ops", "Number of ops emitted for the backward pass">,
  ];
}

def AdamW : Pass<"zero-adamw", "::mlir::ModuleOp"> {
  let summary = "Appends the AdamW update to @train_step";
  let description = [{
    Input: `@train_step` returning the loss and one gradient per parameter.
    Output: `@train_step` that also takes, per parameter, the two AdamW
    moments (arguments marked `nn.adam_m` / `nn.adam_v` with the parameter's
    name) and the scalar hyperparameters (`nn.hyper = "lr"`, `"step"`,
    `"beta1"`, `"beta2"`, `"eps"`, `"weight_decay"`: the runtime fills them
    from its flags, so they are not compile-time options), applies
    `nn.adamw`, and returns the loss followed by the new
    parameters, first moments and second moments. Each state result carries
    `zero.updates = <argument index>`: the runtime stores it back into that
    argument's buffer.

    Mixed precision: a bfloat16 parameter gets a float32 master copy
    (`nn.master`); AdamW updates the master and the new parameter is the
    master rounded to bfloat16 (`nn.cast`). The new masters are returned
    after the new parameters: 2 + 2 + 12 bytes per parameter in all.
  }];
  let dependentDialects = ["::zero::nn::NNDialect"];
}

def FuseEpilogues : Pass<"nn-fuse-epilogues", "::mlir::ModuleOp"> {
  let summary = "Fuses bias_add (and GELU) into the matmul that feeds it";
  let description = [{
    A linear layer is `nn.matmul` followed by `nn.bias_add`, in GPT-2's MLP
    followed by `nn.gelu`. As three kernels, the GEMM writes its product to
    memory and two elementwise kernels read it back; cuBLASLt instead adds
    the bias and applies GELU in the GEMM's epilogue, while the tile is
    still in registers. This pass rewrites, in every function:

    - `nn.matmul` whose only use is an `nn.bias_add` into `nn.matmul_bias`;
    - and, when the sum feeds an `nn.gelu`, the three into
      `nn.matmul_bias_gelu`, which returns the pre-activation as well (GELU's
      gradient reads it).

    The fused op takes the place of the `nn.bias_add`, so every operand is
    already defined there. A matmul with other uses (a gradient GEMM whose
    product is also summed, say) is left alone. The arithmetic is the
    same, in the same order: on the CPU the fused op runs the three kernels
    in sequence and gives bit-identical results. It runs after `zero-adamw`
    in the stage pipeline (backward matmuls have no bias and are untouched);
    `zero-opt --fuse-epilogues=false` leaves it out.
  }];
  let dependentDialects = ["::zero::nn::NNDialect"];
}

def Recompute : Pass<"nn-recompute", "::mlir::ModuleOp"> {
  let summary = "Recomputes units' forward activations inside the backward";
  let description = [{
    Activation recomputation (checkpointing) per unit. Input: `@train_step`
    after `nn-autodiff` (the stage pipeline runs it after
    `nn-fuse-epilogues`, before `zero-placement`), whose backward reads the
    forward's activations. A unit's part of the forward runs from the first
    op that reads one of its parameters to the first op after the last such
    reader that reads another unit's parameter, so a transformer block's
    closing residual add belongs to it. A parameter's unit is its name up to
    the first all-digit component (`h.3.attn.c_attn.weight` is in `h.3`),
    as for `zero-keep-gathered`.

    Output: for each chosen unit, every op of its part whose results the
    backward reads, together with the unit's ops those read in turn, is
    cloned into the backward, each clone (marked `nn.recomputed = "<unit>"`)
    just before the first op that reads it, and the backward reads the
    clones. What the unit takes in (the previous unit's output, parameters,
    data) and its own output (read later in the forward) are kept and
    read by the clones. The originals are then read only in the forward, and
    the buffer planner frees them there: between forward and backward a
    unit holds only its input. The clones run the same kernels on the same
    operands, so losses and weights are bit-identical to the program
    without this pass. At stage 3 `zero-insert-collectives`, which runs
    after it, gathers the unit's parameters for the backward before its
    first clone.

    `units` is `blocks` (every unit whose name ends in an all-digit
    component: `h.0`..`h.11`, `model.layers.0`..) or a list of unit names.
    Naming a unit the forward does not read, or one whose parameters are
    read around another unit's (a tied embedding), is an error. The module
    gets `zero.recompute = {units, ops}`, which `zero-report` prints.
  }];
  let options = [
    ListOption<"units", "units", "std::string",
               "Units whose activations are recomputed: 'blocks', or names "
               "like h.0,h.5">,
  ];
  let statistics = [
    Statistic<"numRecomputedOps", "recomputed-ops",
              "Number of forward ops cloned into the backward">,
  ];
  let dependentDialects = ["::zero::nn::NNDialect"];
}

def Placement : Pass<"zero-placement", "::mlir::ModuleOp"> {
  let summary = "Decides, per ZeRO stage, which training state is sharded";
  let description = [{
    Attaches `zero.placement = #zero.placement<role, distribution>` to every
    argument of `@train_step` and records the stage on the module's
    data-parallel group (`zero.group @dp world_size(N) stage(S)`), whose
    world size it shards over. Stage 0 replicates everything (DDP); stage 1 shards the
    optimizer moments; stage 2 also the gradients; stage 3 also the
    parameters. Data keeps the row split of `zero-split-batch`. No op
    changes here: `zero-insert-collectives` realises the placement.

    With `shard-group-size=G` (hybrid sharding) it declares the mesh's two
    axes as subgroups of `@dp` (`zero.group @shard world_size(G) axis(shard)
    of @dp` and `@replica` of W/G ranks) and places the sharded state
    `sharded over @shard`: sharded within each group of G consecutive
    ranks, replicated across the groups.
  }];
  let options = [
    Option<"stage", "stage", "int64_t", "0", "ZeRO stage (0-3)">,
    Option<"shardGroupSize", "shard-group-size", "int64_t", "0",
           "Shard within groups of this many consecutive ranks (hybrid "
           "sharding); 0 shards over the whole group">,
  ];
  let dependentDialects = ["::zero::sharding::ZeroDialect"];
}

def InsertCollectives : Pass<"zero-insert-collectives", "::mlir::ModuleOp"> {
  let summary = "Inserts exactly the collectives of the chosen ZeRO stage";
  let description = [{
    Realises the placements of `@train_step`. Sharded arguments become flat
    shards (`tensor<S x f32>`, S = ceil(N / world size)). Then:
    - stage 0: each gradient is all-reduced and AdamW updates whole tensors;
    - stages 1, 2: each gradient is reduce-scattered, AdamW updates this
      rank's shard (`zero.local_shard` of the replicated parameter) and the
      new shards are all-gathered back into the replicated parameter;
    - stage 3: each parameter is all-gathered before its first forward use
      and again before its first backward use, each gathered copy is
      released after its last use in that phase, each gradient is
      reduce-scattered and AdamW updates the shards in place.
    The loss is all-reduced so that every rank holds the global mean.
  }];
  let dependentDialects = ["::zero::sharding::ZeroDialect",
                           "::zero::nn::NNDialect"];
  let statistics = [
    Statistic<"numAllGathers", "all-gathers", "Number of zero.all_gather inserted">,
    Statistic<"numReduceScatters", "reduce-scatters", "Number of zero.reduce_scatter inserted">,
    Statistic<"numAllReduces", "all-reduces", "Number of zero.all_reduce inserted">,
  ];
}

def ClipGradNorm : Pass<"zero-clip-grad-norm", "::mlir::ModuleOp"> {
  let summary = "Scales all gradients by the global-norm clipping coefficient";
  let description = [{
    Input: `@train_step` after `zero-insert-collectives`, whose AdamW updates
    read reduced gradients (whole at stage 0, this rank's shards from stage
    1). Output: a new scalar argument `nn.hyper = "max_norm"` (0 disables
    clipping at run time); the squared norms of the gradients AdamW reads are
    summed (and all-reduced over the ranks when the gradients are shards, so
    every rank sees the global norm), `nn.clip_coefficient` turns the sum
    into a scale, and every `nn.adamw` takes it as `grad_scale`. The updates
    move after the coefficient, since it needs every gradient.
  }];
  let dependentDialects = ["::zero::nn::NNDialect",
                           "::zero::sharding::ZeroDialect"];
}

def KeepGathered : Pass<"zero-keep-gathered", "::mlir::ModuleOp"> {
  let summary = "Keeps a unit's gathered parameters from forward to backward";
  let description = [{
    No reshard after forward, per unit (FSDP's
    `reshard_after_forward=False`, DeepSpeed's stage-3 persistence). Input:
    `@train_step` after `zero-insert-collectives` at stage 3, where each
    parameter is all-gathered before its first forward use, released after
    its last forward use, and gathered again for the backward. Output: for
    the parameters of the chosen units, the forward's gathered copy is kept
    (its first `zero.release` is dropped) and the backward's all-gather is
    removed, its uses reading the kept copy. That unit then moves stage 2's
    traffic (2 x its size instead of 3 x) and holds its whole parameters from
    its forward to its backward.

    A parameter's unit is its name up to the first all-digit component
    (`h.3.attn.c_attn.weight` is in unit `h.3`, `model.layers.0.mlp...` in
    `model.layers.0`); a name without one is a unit of its own. `units`
    names the units to keep gathered; empty means every unit. Naming a unit
    that has no parameter gathered twice is an error.
  }];
  let options = [
    ListOption<"units", "units", "std::string",
               "Units whose gathered parameters stay from forward to backward "
               "(empty: all)">,
  ];
  let dependentDialects = ["::zero::sharding::ZeroDialect"];
}

def AccumulateGradients : Pass<"zero-accumulate-gradients", "::mlir::ModuleOp"> {
  let summary = "Splits @train_step into a micro-step and an optimizer step";
  let description = [{
    Gradient accumulation over `micro-batches` micro-batches. Input:
    `@train_step` after `zero-clip-grad-norm`. Output: `@train_step`, run
    once per micro-batch, which computes the loss and the reduced gradients
    and adds each, in float32, into a new accumulator argument
    (`nn.grad_accum = <name>`, placed like the reduced gradient: whole at
    stage 0, this rank's shard from stage 1); and `@train_apply`, run once
    per optimizer step with the same arguments, which holds the clipping and
    AdamW updates, reads the accumulators instead of the gradients and
    zeroes them. With `micro-batches=1` the pass changes nothing.

    `mode` says where the reduction goes. `sharded`: the gradients are
    reduced every micro-batch, so whole gradients never outlive their
    micro-batch from stage 2 on (K reductions per step). `local`
    (PyTorch DDP's `no_sync`): each rank adds its own unreduced gradient
    into a whole float32 accumulator (replicated placement, at every stage)
    and `@train_apply` reduces the accumulators once per step (1/K of the
    gradient traffic, for a whole float32 gradient per rank); an accumulator
    is cast back to the gradient's type before its reduction, so bfloat16
    gradients still cross the wire as bfloat16 unless `zero-fp32-reductions`
    follows. zero-opt decides `--accumulate=auto` before the pipeline runs
    (under `--memory-limit` its planner compiles the program with local
    accumulation and keeps it where it fits) and passes the choice here.
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", "1",
           "Micro-batches per optimizer step">,
    Option<"mode", "mode", "std::string", "\"sharded\"",
           "Where gradients are reduced: sharded (every micro-batch), local "
           "(once per step, from whole float32 accumulators)">,
  ];
  let dependentDialects = ["::zero::nn::NNDialect",
                           "::mlir::arith::ArithDialect"];
}

def Fp32Reductions : Pass<"zero-fp32-reductions", "::mlir::ModuleOp"> {
  let summary = "Reduces bfloat16 gradients in float32 (FSDP2's reduce_dtype)";
  let description = [{
    A bfloat16 sum over ranks rounds every partial sum to 8 bits of
    mantissa, so small contributions are lost; Llama 3 and FSDP2
    (`reduce_dtype=torch.float32`) reduce gradients in float32 instead, at
    twice the bytes on the wire. Input: `@train_step` and `@train_apply`
    after `zero-accumulate-gradients`. Output: every `zero.all_reduce` and
    `zero.reduce_scatter` of a bfloat16 tensor (only gradients are
    bfloat16: the loss and the squared norm are float32) reduces the
    gradient cast to float32, and its readers read the float32 sum:
    `nn.adamw` and `nn.sum_squares` take it as it is (they compute in
    float32), an `nn.cast` to float32 (into an accumulator) disappears,
    and any other reader gets it cast back to bfloat16. A reduction of an
    `nn.cast` from float32 (a local accumulator, cast for the wire) reduces
    the float32 value itself. Float32 programs are unchanged.

    ```mlir
    %g = zero.reduce_scatter %grad over @dp : tensor<3x5xbf16> -> tensor<8xbf16>
    // becomes
    %w = nn.cast %grad : tensor<3x5xbf16> -> tensor<3x5xf32>
    %g = zero.reduce_scatter %w over @dp : tensor<3x5xf32> -> tensor<8xf32>
    ```
  }];
  let dependentDialects = ["::zero::nn::NNDialect"];
  let statistics = [
    Statistic<"numWidened", "widened-reductions",
              "bfloat16 reductions now done in float32">,
  ];
}

def ExactSums : Pass<"zero-exact-sums", "::mlir::ModuleOp"> {
  let summary = "Makes every sum across ranks and micro-batches exact "
                "(--deterministic)";
  let description = [{
    Floating-point sums depend on their order, and the order in which a
    step adds its gradients, losses and squared norms depends on the world
    size and the stage: results differ in the last bits between runs that
    should be equal. This pass makes each of those sums exact, so that the
    order no longer matters: every chunk's contribution (one micro-batch of
    one rank: the same rows, shapes and kernels at every world size) is
    converted to 128-bit fixed point (`i128`, value times 2^64; the
    runtime's `ZRT_EXACT`), the sums are integer sums, and the result is
    converted back to float32 once.

    Input: `@train_step` (and `@train_apply`) after
    `zero-accumulate-gradients` with `mode=local` (or one micro-batch) and
    `zero-clip-grad-norm`, in float32. Output:
    - every `nn.grad_accum` argument is an `i128` accumulator: the
      micro-step's `nn.add` into it becomes `nn.accumulate_exact`, the
      apply step's reduction of it reduces the `i128` sum, and the readers
      read its `nn.from_exact`; the zeroed accumulators are `i128` zeros;
    - every other gradient reduction (`zero.all_reduce`,
      `zero.reduce_scatter`) reduces `nn.accumulate_exact` of the gradient
      into a zero accumulator, and its readers read `nn.from_exact`;
    - the squared norm is one chain of `nn.sum_squares_exact`, all-reduced
      as `i128` when the gradients are shards, then `nn.from_exact`;
    - the loss is all-reduced exactly and returned as `tensor<i128>`: the
      runtime adds the micro-batches' losses exactly and converts once;
    - the module gets `zero.deterministic = <chunk rows>` (what each rank
      computes per micro-batch), which `zero-lower-to-zrt` declares
      (`zrt.declare_deterministic`).

    ```mlir
    %r = zero.all_reduce %g over @dp : tensor<3x5xf32> -> tensor<3x5xf32>
    // becomes
    %z = arith.constant dense<0> : tensor<3x5xi128>
    %e = nn.accumulate_exact %z, %g : tensor<3x5xi128>, tensor<3x5xf32> -> tensor<3x5xi128>
    %s = zero.all_reduce %e over @dp : tensor<3x5xi128> -> tensor<3x5xi128>
    %r = nn.from_exact %s : tensor<3x5xi128> -> tensor<3x5xf32>
    ```

    Refused: bfloat16 gradients (the exact mode is for float32 training)
    and accumulators reduced in the micro-step (`mode=sharded`).
  }];
  let dependentDialects = ["::zero::nn::NNDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numExactReductions", "exact-reductions",
              "reductions that now sum exact accumulators">,
  ];
}

def OffloadOptimizer : Pass<"zero-offload-optimizer", "::mlir::ModuleOp"> {
  let summary = "Keeps the optimizer state in host memory and runs AdamW on the host";
  let description = [{
    ZeRO-Offload (`--offload=optimizer`). Input: the program after the
    gradient reductions and the accumulation split (`@train_step`, and
    `@train_apply` when it holds the updates). Output: the moments and
    master weights placed `#zero.placement<..., in host>`; each `nn.adamw`
    and the `nn.cast` of its new master to a bf16 parameter marked
    `zero.host`; every device value an update reads copied down once with
    `zero.to_host` (the gradient, an f32 parameter, the hyperparameters and
    the clipping coefficient), and each new parameter the device reads
    copied up with `zero.to_device`. The kernels and their order do not
    change, so training is bit-identical; `zero-lower-to-zrt` gives the
    host values the ledger's host categories.
  }];
  let dependentDialects = ["::zero::nn::NNDialect",
                           "::zero::sharding::ZeroDialect"];
}

def ExtractEval : Pass<"zero-extract-eval", "::mlir::ModuleOp"> {
  let summary = "Derives the forward-only @eval_step from @train_step";
  let description = [{
    Input: `@train_step` after `zero-accumulate-gradients` (the step of one
    micro-batch, with every collective in place). Output: a new function
    `@eval_step` of the same arguments that returns the loss only: a copy
    of `@train_step` keeping just the ops the loss depends on (the forward,
    its stage-3 parameter gathers, the loss's all-reduce), so no gradient,
    reduction or update is computed and no argument is written. The
    runtime's validation (`--val-data`, `--eval-every`) calls it
    (`zero_program_eval`) with the step's argument buffers, so a validation
    batch costs a forward pass.

    ```mlir
    func.func @eval_step(%x: ..., %w: ... {zero.placement = ...}, ...)
        -> tensor<f32> {
      %w_full = zero.all_gather %w over @dp : ...
      ...
      %sum = zero.all_reduce %loss over @dp : tensor<f32>
      return %sum : tensor<f32>
    }
    ```
  }];
}

def BucketCollectives : Pass<"zero-bucket-collectives", "::mlir::ModuleOp"> {
  let summary = "Packs many small collectives into few large ones";
  let description = [{
    A collective costs a latency plus its bytes over the bandwidth; hundreds
    of small ones (biases, norm gains) are latency-bound. Input:
    `@train_step` (and `@train_apply`) with blocking collectives. Output:
    - parameter all-gathers (stage 3) of the same unit (see
      `zero-keep-gathered`) and the same phase (the k-th gather of each
      parameter) become one: `zero.pack` concatenates the unit's shards, one
      `zero.all_gather` moves them, `zero.unpack` (chunks = world size) cuts
      out the whole parameters, where the first of the unit's gathers was;
    - gradient reductions (reduce-scatters, and the all-reduces of stage 0)
      are grouped in the order the backward produces them into buckets of at
      most `bucket-bytes` bytes (a gradient larger than that is a bucket of
      its own); each bucket is reduced by one collective as soon as its last
      gradient exists. `zero.pack` lays a reduce-scatter's bucket out rank
      by rank (chunks = world size), so that each rank receives its shard of
      every gradient, and `zero.unpack` splits them before their first use.
    Bytes moved are unchanged (every tensor keeps its own padding); results
    are bit for bit those of the separate collectives wherever the sum over
    ranks is taken in the same order (always at two ranks).
    `bucket-bytes` = 0 leaves gradient reductions alone; `gather-units` =
    false leaves gathers alone.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", "26214400",
           "Bytes of whole gradients per reduction bucket (0: no buckets; "
           "default 25 MiB, as PyTorch DDP)">,
    Option<"gatherUnits", "gather-units", "bool", "true",
           "Gather each unit's parameters with one collective per phase">,
  ];
  let dependentDialects = ["::zero::sharding::ZeroDialect"];
}

def ScheduleOverlap : Pass<"zero-schedule-overlap", "::mlir::ModuleOp"> {
  let summary = "Splits collectives into start/wait and overlaps them with compute";
  let description = [{
    Input: `@train_step` (and `@train_apply`) with blocking collectives.
    Output: every collective becomes `zero.*_start` + `zero.wait`:
    - each wait sinks to just before the first use of its result;
    - parameter all-gathers are prefetched: the start of gather i moves up
      to just after the start of gather i - `prefetch` (in forward order,
      then backward order), never above the op that produces its input, and
      only as far as keeps the bytes of the gathered copies in flight at
      most `max-live-gather-bytes` (0: no cap);
    - gradient reductions start where the gradient is produced, and the
      gathers of updated parameter shards (stages 1-2) right after the
      update; each is waited for at the latest before the
      `max-inflight-reductions`-th next of them starts, so that what they
      read until their wait (whole gradients, new shards) does not pile up.
    Collectives keep their program order, so every rank starts them in the
    same order. Numerics are unchanged.
  }];
  let options = [
    Option<"prefetch", "prefetch", "int64_t", "1",
           "All-gathers started ahead of their turn (0: none)">,
    Option<"maxLiveGatherBytes", "max-live-gather-bytes", "int64_t", "0",
           "Cap on the bytes of gathered copies in flight (0: no cap)">,
    Option<"maxInflightReductions", "max-inflight-reductions", "int64_t",
           "1", "Gradient reductions in flight at once">,
  ];
  let dependentDialects = ["::zero::sharding::ZeroDialect"];
}

def OverlapOffload : Pass<"zero-overlap-offload", "::mlir::ModuleOp"> {
  let summary = "Runs each host update as a host task, waited for where the device next reads it";
  let description = [{
    `--offload=optimizer`, after `zero-lower-to-zrt` and before
    `zero-plan-memory`. Input: `@zero_program_step` (and
    `@zero_program_apply`) whose host updates are `zrt.adamw on_host`, the
    `zrt.cast on_host` of a new master and the `zrt.copy_to_device` of the
    new parameter. Output: each such chain between `zrt.host_task_begin`
    and `zrt.host_task_end writes %param`, which the runtime runs on a host
    thread; `zrt.host_wait %param` before the parameter's first use in
    each function (the next step's; the next micro-step's when the apply
    function holds the updates) and before its first use after the task;
    `zrt.host_wait_all` before each function's first host buffer; and
    the frees of the host buffers the tasks use moved to the end of the
    function. The update overlaps the rest of the step and the next
    forward, and training stays bit-identical.
  }];
}

def PlanMemory : Pass<"zero-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Gives every buffer an offset in a per-rank arena per category";
  let description = [{
    Input: the zrt program of `zero-lower-to-zrt`. From the order of the
    ops it takes each buffer's live interval: a `zrt.alloc` lives until its
    `zrt.free`, the staging copy of a padded collective from its start to
    its `zrt.wait`. Buffers of the same category (param, grad, optimizer,
    activation, comm, data) live at the same time get disjoint
    `alignment`-aligned ranges of that category's arena, placed greedily by
    size. It plans a second time with one arena for the temporaries of
    every category, where a range one category frees can hold another's
    buffer (the backward frees activations as it makes gradients), and
    binds that plan when it is smaller (`share-arenas`). Output: each
    `zrt.alloc` carries `arena_offset` in the plan that binds (a staging
    collective `staging_offset`), each function `zrt.arena_bytes` (the
    arena size per category) and `zrt.shared_arena_bytes` (the size of the
    one arena), and the description `zrt.declare_shared_arena` or one
    `zrt.declare_arena` per category; `zero-report` prints both plans next
    to the peak of live bytes.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64",
           "Alignment of every offset (a power of two; libzrt aligns to 64)">,
    Option<"shareArenas", "share-arenas", "bool", "true",
           "Bind one arena shared by all categories when it is smaller than "
           "one arena per category">,
  ];
}

def ElideZeroFills : Pass<"zero-elide-zero-fills", "::mlir::ModuleOp"> {
  let summary = "Skips the zero-fill of buffers that their first kernel overwrites";
  let description = [{
    Input: the planned zrt program of `zero-plan-memory`. A `zrt.alloc`
    comes zero-filled, which only a buffer read before it is written in full
    needs (a packed bucket's padding, a kernel that accumulates into its
    output). This pass marks `unfilled` every planned `zrt.alloc` whose
    first user in the function's order is a kernel that writes the buffer
    (or a `zrt.view` of it) as a whole output and does not read it: GEMMs,
    elementwise kernels and their gradients, casts, the norms' outputs and
    input gradients, rope, attention's output, the embedding lookup, the
    cross-entropy's logit gradient, column slices, optimizer offload's
    copies, and all-gathers (stage 3's gathered parameters). Everything else, and
    every unplanned buffer, stays filled. The runtime then allocates the
    buffer with `zrt_alloc_in_arena_unfilled`, and the time model charges no
    fill for it.

    ```mlir
    // Before: filled, then overwritten by the GEMM.
    %c = zrt.alloc activation {arena_offset = 0 : i64} : memref<4x6xf32>
    zrt.matmul %a, %b -> %c : memref<4x5xf32>, memref<5x6xf32> -> memref<4x6xf32>
    // After:
    %c = zrt.alloc activation {arena_offset = 0 : i64, unfilled} : memref<4x6xf32>
    ```
  }];
}

#endif // ZERO_TRANSFORMS_PASSES
