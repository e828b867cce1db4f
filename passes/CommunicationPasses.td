//===- CommunicationPasses.td - how gradients cross the wire -*- tablegen -*-===//
//
// Included by Passes.td: the passes behind --accumulate and --reduce-dtype.
//
//===----------------------------------------------------------------------===//

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
      computes per micro-batch), which `zero-lower-to-runtime` declares
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

def ChooseAccumulation
    : Pass<"zero-choose-accumulation", "::mlir::ModuleOp"> {
  let summary = "Chooses local accumulation when its memory fits the limit";
  let description = [{
    `--accumulate=auto` under `--memory-limit`: local accumulation moves
    1/K of the gradient traffic but holds a whole float32 gradient per rank,
    so it is chosen exactly when the program it makes fits. Input: the
    module before `zero-accumulate-gradients`. The pass compiles a copy of
    it, nested in the module, through the rest of the stage pipeline
    (`options`: the stage pipeline's options, as `zero-stage-pipeline{...}`
    takes them) with `accumulate=local`, up to the planned zrt program;
    predicts its peak memory per rank as `zero-report` does; erases the
    copy; and records `zero.accumulate = "local"` on the module when the
    peak is at most `limit`, else `"sharded"`, which
    `zero-accumulate-gradients{mode=auto}` follows. Nothing else changes.
  }];
  let options = [
    Option<"limit", "limit", "std::string", "\"\"",
           "The most bytes a rank may use (80GiB, 40GB, 1.5e9, ...)">,
    Option<"stageOptions", "options", "std::string", "\"\"",
           "The stage pipeline's options (stage=1 world-size=2 grad-accum=3 "
           "...)">,
  ];
}

def PredictSchedule : Pass<"zero-predict-schedule", "::mlir::ModuleOp"> {
  let summary = "Declares when each collective should start, run and block";
  let description = [{
    Input: the zrt program. Replays one optimizer step (every micro-batch,
    then the apply function) on two clocks, as libzrt runs it
    (passes/SchedulePrediction.h): the compute thread runs the kernels in
    order, each taking the longer of its FLOPs at `compute-rate` and its
    buffers' bytes at `memory-bandwidth`; the communication thread runs the
    collectives one at a time in start order, each taking a ring's
    `link-latency` per step plus its bytes on the wire at `link-bandwidth`.
    A collective begins when it is started or when the one before it ends;
    a wait blocks the compute clock until its collective ends. Output: one
    `zrt.declare_collective_plan` per collective in `@zero_program_describe`
    (replacing any from an earlier run), with the time it queues, its
    transfer and the time its wait blocks, which the runtime's
    `--check-schedule` compares with the run. `zero-report` prints the same
    prediction with each collective's position.

    ```mlir
    zrt.declare_collective_plan 1 queued 0 transfer 84000 exposed 84000
    ```
  }];
  let options = TimeModelOptions;
}
