/*===- zrt.h - zero-opt runtime C ABI ------------------------------*- C -*-===*
 *
 * The one contract between code that zero-opt generates and libzrt, the
 * runtime that executes it. Plain C: no MLIR, LLVM or C++ type crosses it.
 *
 * The compiler's lowering (passes/LowerZeroToZrt.cpp) emits calls to exactly
 * these symbols with these signatures; the runtime implements them. Bump
 * ZRT_ABI_VERSION whenever a signature or an enum value changes: the generated
 * program declares the version it was built against and the runtime refuses
 * to run a program built for another one.
 *
 * Conventions:
 *  - Tensors are dense, row-major, float32 unless stated (labels are int32).
 *  - Sizes are element counts (int64_t) unless the name says bytes.
 *  - A "shard" of a tensor of N elements over W ranks has S = ceil(N / W)
 *    elements; rank r owns flat elements [r*S, r*S + S) of the tensor padded
 *    with zeros to W*S elements.
 *  - Every entry point takes the context first. Kernels may be called with
 *    out == in (in place) where documented.
 *
 *===----------------------------------------------------------------------===*/
#ifndef ZERO_ZRT_H
#define ZERO_ZRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZRT_ABI_VERSION 20

typedef struct zrt_context zrt_context;

/* Element types of float tensors. bf16 is stored as the upper 16 bits of an
 * IEEE float32 (round-to-nearest-even on conversion); kernels compute and
 * accumulate in float32 whatever the storage type. */
typedef enum zrt_dtype { ZRT_F32 = 0, ZRT_BF16 = 1, ZRT_EXACT = 2 } zrt_dtype;

/* ZRT_EXACT is not a float type: it is the exact accumulator of
 * --deterministic programs (zrt_declare_deterministic). Each element is a
 * two's-complement 128-bit integer (16 bytes, the layout of GCC's __int128)
 * holding value * 2^ZRT_EXACT_FRACTION_BITS, so sums of them are exact and
 * do not depend on their order. A float x converts to it as
 * x * 2^64 rounded to nearest even; a non-finite x, or |x| >= 2^62, gives
 * ZRT_EXACT_NAN, and so does a sum that overflows. ZRT_EXACT_NAN (INT128_MIN)
 * stays NaN through sums and converts back to a float NaN. Only the exact
 * kernels (zrt_accumulate_exact, zrt_sum_squares_exact, zrt_from_exact),
 * zrt_fill (of 0), zrt_copy, zrt_shard_slice and the collectives (whose
 * sums are then exact) take it. */
#define ZRT_EXACT_FRACTION_BITS 64

/*===--- Program description ----------------------------------------------===*
 * A generated program exports four functions (names below). The runtime's
 * main calls zero_program_describe once, which calls zrt_declare_program
 * once and zrt_declare_arg once per argument of the step function, in
 * argument order. The runtime then allocates and initialises one buffer per
 * argument and calls zero_program_step once per training step with the array
 * of those buffers.
 *===----------------------------------------------------------------------===*/

/* What the program trains on; decides how the runtime fills data arguments. */
typedef enum zrt_task {
  ZRT_TASK_CLASSIFY = 0, /* synthetic features/labels drawn from --seed      */
  ZRT_TASK_LM = 1        /* next-token prediction on a token file (--data)   */
} zrt_task;

/* What a step-function argument holds; decides how the runtime fills it. */
typedef enum zrt_role {
  ZRT_ROLE_FEATURES = 0, /* this rank's rows of the input batch (float32) */
  ZRT_ROLE_LABELS = 1,   /* this rank's class labels (int32)              */
  ZRT_ROLE_PARAM = 2,    /* a trainable parameter (full or shard)         */
  ZRT_ROLE_ADAM_M = 3,   /* AdamW first moment (full or shard), zeroed    */
  ZRT_ROLE_ADAM_V = 4,   /* AdamW second moment (full or shard), zeroed   */
  ZRT_ROLE_LR = 5,       /* scalar float32 learning rate (--lr)           */
  ZRT_ROLE_STEP = 6,     /* scalar float32 1-based step count             */
  ZRT_ROLE_TOKENS = 7,   /* int32 token ids of this rank's sequences,
                            [local_batch * seq_len], row-major            */
  ZRT_ROLE_TARGETS = 8,  /* int32 next token of each position (LM labels) */
  ZRT_ROLE_POSITIONS = 9,/* int32 position of each token in its sequence  */
  ZRT_ROLE_MASTER = 10,  /* float32 master copy of the bf16 parameter of
                            the same name (full or shard); initialised
                            and loaded like that parameter                */
  ZRT_ROLE_MAX_NORM = 11,/* scalar float32 gradient-clipping threshold
                            (--clip-grad-norm; 0 disables clipping)       */
  ZRT_ROLE_GRAD_ACCUM = 12,/* float32 (ZRT_EXACT under --deterministic)
                            accumulator of the gradient of the named
                            parameter (full or shard) over the
                            micro-batches of a step; zeroed              */
  ZRT_ROLE_BETA1 = 13,   /* scalar float32 AdamW beta1 (--adam-beta1)     */
  ZRT_ROLE_BETA2 = 14,   /* scalar float32 AdamW beta2 (--adam-beta2)     */
  ZRT_ROLE_EPS = 15,     /* scalar float32 AdamW epsilon (--adam-eps)     */
  ZRT_ROLE_WEIGHT_DECAY = 16 /* scalar float32 decoupled weight decay
                            (--weight-decay)                             */
} zrt_role;

/* How a parameter is initialised. Values are drawn from a counter-based
 * generator keyed on (seed, parameter name, flat element index), so every
 * world size and stage initialises the same full tensor. */
typedef enum zrt_init {
  ZRT_INIT_ZEROS = 0,
  ZRT_INIT_UNIFORM = 1, /* U(-scale, scale), e.g. 1/sqrt(fan_in) */
  ZRT_INIT_NORMAL = 2,  /* N(0, scale^2)                         */
  ZRT_INIT_ONES = 3     /* norm gains                            */
} zrt_init;

/* Memory categories for the allocator's ledger. */
typedef enum zrt_mem_category {
  ZRT_MEM_PARAM = 0,
  ZRT_MEM_GRAD = 1,
  ZRT_MEM_OPTIMIZER = 2, /* moments and master weights */
  ZRT_MEM_ACTIVATION = 3,
  ZRT_MEM_COMM = 4, /* gathered copies and collective staging buffers */
  ZRT_MEM_DATA = 5,
  /* Host memory (zero-opt --offload=optimizer): on a GPU pinned host memory,
   * on the CPU an allocation of its own; a host category's arena is its own
   * (never the shared one), and the ledger keeps these bytes apart from the
   * device's total. */
  ZRT_MEM_HOST_OPTIMIZER = 6, /* moments and master weights on the host */
  ZRT_MEM_HOST_STAGING = 7,   /* what the host optimizer reads and writes:
                                 gradient and parameter copies, scalars */
  ZRT_MEM_NUM_CATEGORIES = 8
} zrt_mem_category;

/* Whether buffers of `category` live in host memory. */
static inline int zrt_mem_category_is_host(int32_t category) {
  return category == ZRT_MEM_HOST_OPTIMIZER || category == ZRT_MEM_HOST_STAGING;
}

/* Not a category: the arena that the temporaries of every category share
 * when the compiler's plan lets freed ranges of one category hold buffers of
 * another (zrt_declare_arena). Each buffer is still charged to its own
 * category in the ledger. */
#define ZRT_ARENA_SHARED ZRT_MEM_NUM_CATEGORIES

/* A GPU backend's own memory, outside the categories above ("memory runtime
 * workspace" in the ledger), as far as the program determines it: the
 * CUDA backend's cuBLASLt workspace, and the attention backward's per-row
 * statistics (two floats per batch entry, head and query row of the
 * largest zrt_attention_grad call). zero-opt --report predicts these two;
 * the runtime adds its per-call kernel scratch and two small slots. */
#define ZRT_CUDA_GEMM_WORKSPACE_BYTES ((int64_t)32 << 20)
static inline int64_t
zrt_cuda_attention_statistics_bytes(int64_t batch, int64_t heads, int64_t seq) {
  return batch * heads * seq * 2 * (int64_t)sizeof(float);
}

/* The ledger category of the buffer the runtime allocates for an argument
 * of `role` (data and scalars count as data). Inline, not a symbol: the
 * compiler's memory report (passes/Report.cpp) must charge arguments exactly
 * as the runtime does. */
static inline int32_t zrt_role_category(int32_t role) {
  switch (role) {
  case ZRT_ROLE_PARAM:
    return ZRT_MEM_PARAM;
  case ZRT_ROLE_ADAM_M:
  case ZRT_ROLE_ADAM_V:
  case ZRT_ROLE_MASTER:
    return ZRT_MEM_OPTIMIZER;
  case ZRT_ROLE_GRAD_ACCUM:
    return ZRT_MEM_GRAD;
  default:
    return ZRT_MEM_DATA;
  }
}

/* The ledger category of an argument's buffer: its role's, or host
 * optimizer memory for the state zrt_declare_host_arg moved to the host. */
static inline int32_t zrt_arg_category(int32_t role, int32_t host) {
  return host ? ZRT_MEM_HOST_OPTIMIZER : zrt_role_category(role);
}

/* Declares the program: ABI version, compiled world size and ZeRO stage, the
 * task, and the data shape. CLASSIFY: global_batch rows of num_features
 * floats, num_classes classes (seq_len is 1). LM: global_batch sequences of
 * seq_len tokens, ids below num_classes (the vocabulary size). */
void zrt_declare_program(zrt_context *ctx, int64_t abi_version,
                         int64_t world_size, int64_t stage, int32_t task,
                         int64_t global_batch, int64_t seq_len,
                         int64_t num_features, int64_t num_classes);

/* Declares step argument `index` of element type `dtype` (labels, tokens,
 * targets and positions are int32 whatever `dtype` says). The whole tensor
 * has `rank` (0-4) dimensions dims[0..rank) (dim0..dim3, unused ones 0).
 * `sharded` != 0 means the buffer holds this rank's flat shard of it
 * (ceil(numel / world_size) elements). Parameters and masters are
 * initialised by `init` with `init_scale`, or loaded by name (--init-from);
 * other roles ignore both. Data arguments declare this rank's shape. */
void zrt_declare_arg(zrt_context *ctx, int64_t index, const char *name,
                     int32_t role, int32_t dtype, int32_t rank, int64_t dim0,
                     int64_t dim1, int64_t dim2, int64_t dim3, int32_t sharded,
                     int32_t init, float init_scale);

/* Gradient accumulation: each optimizer step runs zero_program_step once per
 * micro-batch (micro_batches >= 1, 1 when never declared), each on the next
 * global batch of data, then zero_program_apply once. */
void zrt_declare_micro_batches(zrt_context *ctx, int64_t micro_batches);

/* A transformer program's Hugging Face config.json (NUL-terminated JSON
 * text), which --export-hf writes next to the trained weights. Programs of
 * other models do not declare one. */
void zrt_declare_hf_config(zrt_context *ctx, const char *json);

/* The compiler's plan for collective `sequence` (1, 2, ... in start order
 * over one optimizer step: every micro-batch, then the apply function), in
 * nanoseconds by its time model (zero-predict-schedule): how long it waits
 * on the communication thread behind the collectives started before it,
 * its transfer, and how long its wait blocks the compute thread. The
 * runtime's --check-schedule compares the measured run with it. */
void zrt_declare_collective_plan(zrt_context *ctx, int64_t sequence,
                                 int64_t queued_ns, int64_t transfer_ns,
                                 int64_t exposed_ns);

/* A --deterministic program (zero-opt --deterministic): every sum across
 * ranks or micro-batches is exact (ZRT_EXACT accumulators reduced by exact
 * sums), so the results do not depend on how the global batch is spread
 * over ranks. The loss that zero_program_step and zero_program_eval write is
 * then one ZRT_EXACT element (16 bytes, the exact sum over the ranks of
 * their chunks' losses), which the runtime sums exactly over the
 * micro-batches and converts once. `chunk_rows` is what each rank computes
 * per micro-batch (global batch / (world size x micro-batches) rows): runs
 * with the same chunk_rows compute every chunk's gradient from the same
 * kernels on the same shapes, so their losses and weights are bitwise
 * identical at every world size and ZeRO stage. Declared at most once,
 * after zrt_declare_program. */
void zrt_declare_deterministic(zrt_context *ctx, int64_t chunk_rows);

/* Hybrid sharding (zero-opt --shard-group-size=G): the arguments declared
 * sharded are sharded over groups of G consecutive ranks and replicated
 * across the world_size / G groups. Rank r holds shard r % G of each (of
 * ceil(numel / G) elements); ranks r and r' hold the same state when
 * r % G == r' % G. G divides the world size; 1 < G < world size. Declared at
 * most once, after zrt_declare_program; without it the sharded arguments are
 * sharded over every rank (G = world size). */
void zrt_declare_shard_groups(zrt_context *ctx, int64_t shard_group_size);

/* Optimizer offload (zero-opt --offload=optimizer): argument `index`, a
 * moment or a master copy (declared before), lives in host memory (pinned on
 * a GPU), charged to ZRT_MEM_HOST_OPTIMIZER; only the host entries below
 * read or write it. */
void zrt_declare_host_arg(zrt_context *ctx, int64_t index);

/* Exported by the generated object (not by libzrt). */
void zero_program_describe(zrt_context *ctx);
/* `args[i]` is the buffer of argument i; `loss` receives this micro-batch's
 * share of the step's global mean loss (the same value on every rank): the
 * step's loss is the sum over its micro-batches. `loss` is one float32,
 * or one ZRT_EXACT element in a --deterministic program. */
void zero_program_step(zrt_context *ctx, void **args, void *loss);
/* The optimizer step after the micro-batches (empty without gradient
 * accumulation, where zero_program_step updates the state itself). */
void zero_program_apply(zrt_context *ctx, void **args);
/* Validation: the loss of zero_program_step on the same arguments, from the
 * forward alone (no gradient, no update, no argument written). */
void zero_program_eval(zrt_context *ctx, void **args, void *loss);

/*===--- Memory -----------------------------------------------------------===*/

/* Allocates `bytes` (64-byte aligned, zero-filled) and charges the ledger of
 * `category`. Never returns NULL: failure stops the job with a message. */
void *zrt_alloc(zrt_context *ctx, int64_t bytes, int32_t category);
void zrt_free(zrt_context *ctx, void *ptr);

/* The compiler's memory plan (zero-plan-memory), binding: the temporaries of
 * `category` live at planned offsets in one block of `bytes`, its arena; or,
 * with `category` ZRT_ARENA_SHARED, the temporaries of every category live
 * in that one block (then no category has an arena of its own).
 * zero_program_describe declares each arena once; the runtime allocates the
 * block (one allocation per arena, the backend's memory) at its first
 * buffer. The step and apply functions share it (they never run at once). */
void zrt_declare_arena(zrt_context *ctx, int32_t category, int64_t bytes);
/* A temporary at its planned place: `bytes` at `offset` of the arena of
 * `category` (of the shared arena when one is declared, unless `category`
 * is a host one), zero-filled and charged to the ledger as zrt_alloc does; freed
 * with zrt_free (which gives the range back to the plan, not to the
 * allocator). A range outside the declared arena stops the job with a
 * message. */
void *zrt_alloc_in_arena(zrt_context *ctx, int64_t bytes, int32_t category,
                         int64_t offset);
/* zrt_alloc_in_arena without the zero-fill: the bytes keep what the range
 * held. For a buffer whose first kernel writes every element before anything
 * reads one (zero-elide-zero-fills marks it `unfilled`). */
void *zrt_alloc_in_arena_unfilled(zrt_context *ctx, int64_t bytes, int32_t category,
                         int64_t offset);

/*===--- Kernels (CPU backend: OpenBLAS + plain loops) --------------------===*
 * `dtype` is the element type of every float tensor argument of the kernel
 * unless stated; scalars passed by pointer (loss, lr, step, norms) are always
 * float32. "In place allowed" means an output may alias the input named.
 *===----------------------------------------------------------------------===*/

/* What zrt_matmul_bias does after the product. */
typedef enum zrt_epilogue {
  ZRT_EPILOGUE_BIAS = 0,     /* c = op(a) op(b) + bias                   */
  ZRT_EPILOGUE_BIAS_GELU = 1 /* pre = op(a) op(b) + bias, c = gelu(pre) */
} zrt_epilogue;

/* The floating-point operations of the product kernels, counted the same by
 * the compiler's time model (each zrt op's getFlops) and the runtime's
 * --calibrate (the FLOP rate it measures). The other kernels are bound by
 * their bytes and count none. */
/* zrt_matmul and zrt_matmul_bias: c[m,n] = a[m,k] b[k,n]. */
static inline int64_t zrt_matmul_flops(int64_t m, int64_t n, int64_t k) {
  return 2 * m * n * k;
}
/* zrt_attention over rows = batch x seq_len rows of `heads` heads of
 * head_dim: Q K^T and P V, 2 seq_len^2 head_dim each per sequence and head
 * (the causal mask's half is not subtracted: the kernels compute whole
 * tiles). zrt_attention_grad computes Q K^T again, then dV, dP, dQ and dK:
 * five products to the forward's two. */
static inline int64_t zrt_attention_flops(int64_t rows, int64_t seq_len,
                                          int64_t heads, int64_t head_dim,
                                          int backward) {
  int64_t forward = 4 * rows * seq_len * heads * head_dim;
  return backward ? forward * 5 / 2 : forward;
}

/* Every kernel, declared from the catalogue (zrt_kernels.def: the contract
 * of each is the comment above its line there). */
#define ZRT_KERNEL(name, backend_name, params, args) void zrt_##name params;
#include "zrt_kernels.def"
#undef ZRT_KERNEL

/*===--- Offload: the optimizer on the host -------------------------------===*
 * Entries of --offload=optimizer programs. The copies move `bytes` between a
 * buffer in the device's memory and one in host memory (ZRT_MEM_HOST_*),
 * after every kernel queued before; both return once the destination holds
 * the bytes, and the ledger counts them ("offload to_host|to_device").
 * zrt_host_adamw and zrt_host_cast are zrt_adamw and zrt_cast run by the
 * host's CPU on host buffers, whatever the device.
 *===----------------------------------------------------------------------===*/
void zrt_copy_to_host(zrt_context *ctx, const void *device_src,
                      void *host_dst, int64_t bytes);
void zrt_copy_to_device(zrt_context *ctx, const void *host_src,
                        void *device_dst, int64_t bytes);
void zrt_host_adamw(zrt_context *ctx, int32_t grad_dtype, const float *p,
                    const void *g, const float *m, const float *v,
                    float *p_out, float *m_out, float *v_out, int64_t n,
                    const float *lr, const float *step, const float *grad_scale,
                    const float *beta1, const float *beta2, const float *eps,
                    const float *weight_decay);
void zrt_host_cast(zrt_context *ctx, int32_t src_dtype, int32_t dst_dtype,
                   const void *src, void *dst, int64_t n);
/* Host tasks (zero-overlap-offload): between zrt_host_task_begin and
 * zrt_host_task_end, zrt_host_adamw, zrt_host_cast and zrt_copy_to_device
 * are queued, in order, for a host thread instead of run (on the CPU
 * backend; on a device they run at once), and zrt_host_task_end names the
 * device buffer the task writes. zrt_host_wait blocks until the task that
 * writes `device_buffer` has run (at once when none is pending), and
 * zrt_host_wait_all until every queued task has. */
void zrt_host_task_begin(zrt_context *ctx);
void zrt_host_task_end(zrt_context *ctx, const void *device_dst);
void zrt_host_wait(zrt_context *ctx, const void *device_buffer);
void zrt_host_wait_all(zrt_context *ctx);

/*===--- Diagnostics ------------------------------------------------------===*/

/* `sum_squares` (one float32 element that zrt_sum_squares has just written,
 * device memory on a GPU) is this rank's part of the squared norm of the
 * gradient of parameter `param` (NUL-terminated, alive as long as the
 * program). Free unless the run has --check-finite: then the runtime reads
 * the value, and when the step's gradient norm is not finite names the
 * first parameter, in the order of these calls, whose part is not finite on
 * some rank. The program makes the calls in the same order on every rank. */
void zrt_watch_gradient(zrt_context *ctx, const float *sum_squares,
                        const char *param);

/*===--- Collectives over the data-parallel group (MPI on the CPU) --------===*
 * bf16 tensors travel as bf16 (2 bytes an element); sums of bf16 accumulate
 * in float32 per pair of operands (a custom MPI_Op). `label` names the
 * tensor or bucket moved ("h.0.attn.c_attn.weight", "bucket of 4: ..."; ""
 * or NULL when unnamed) for the collective watchdog's message; the string
 * must outlive the collective (the compiler passes constants).
 *===----------------------------------------------------------------------===*/

/* The one traffic formula: what the runtime's ledger counts, --report
 * predicts and the zero dialect's CollectiveOpInterface answers. A rank is
 * charged the ZeRO paper's data volume: an all-gather or a reduce-scatter of
 * an N-element tensor in shards of S moves the padded tensor, W * S elements
 * (as MPI and NCCL do; S = ceil(N / W) in generated code), an all-reduce
 * twice its buffer (a reduce-scatter plus an all-gather). W is the size of
 * the collective's group. So stages 0-2 move 2 Psi a step, stage 3 3 Psi. */
/* The ranks a collective runs over. WORLD: every rank (the loss, and every
 * collective of a program without shard groups). SHARD: the G consecutive
 * ranks of this rank's shard group, in rank order (this rank is number
 * r % G in it): the gathers and reduce-scatters of sharded state, and the
 * squared norm of sharded gradients. REPLICA: the world_size / G ranks that
 * hold the same shards (r % G equal), in rank order: the all-reduce of the
 * gradient shards across groups. Without zrt_declare_shard_groups SHARD is
 * WORLD and REPLICA is this rank alone. */
typedef enum zrt_group {
  ZRT_GROUP_WORLD = 0,
  ZRT_GROUP_SHARD = 1,
  ZRT_GROUP_REPLICA = 2,
  ZRT_NUM_GROUPS = 3
} zrt_group;

/* The collectives, one entry each in the catalogue (zrt_collectives.def:
 * the contract of each is the comment above its line there). Found through
 * the include path, as zero/zrt.h is: a copy of zrt.h next to a changed
 * zrt_kernels.def (the catalogue tests) still reads this one. */
typedef enum zrt_collective {
#define ZRT_COLLECTIVE(KIND, ...) ZRT_##KIND,
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
  ZRT_NUM_COLLECTIVES
} zrt_collective;
static inline int64_t zrt_traffic_elements(zrt_collective kind, int64_t numel,
                                           int64_t shard_numel,
                                           int64_t group_size) {
  switch (kind) {
#define ZRT_COLLECTIVE(KIND, name, Name, shape, elements, traffic, ...)        \
  case ZRT_##KIND:                                                             \
    return traffic;
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
  default:
    return 0;
  }
}

/* Every collective runs over `group` (a zrt_group); W is its size and
 * "rank" a rank's number in it. Each is declared twice from the catalogue:
 * zrt_<name> blocks until it has completed on this rank, and
 * zrt_<name>_start starts it (below). */
#define ZRT_COLLECTIVE(KIND, name, Name, shape, elements, traffic, params,     \
                       args)                                                   \
  void zrt_##name params;
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE

/*===--- Asynchronous collectives -----------------------------------------===*
 * The same collectives, started now and completed later so that they
 * overlap the kernels issued in between. They run in the order started, on
 * the runtime's communication thread (CPU backend) or stream (CUDA). The
 * returned handle (> 0) is waited for exactly once; until then the buffers
 * the collective reads or writes must not be touched. Bytes are counted
 * when the collective starts, as for the blocking forms (which behave as a
 * start followed at once by a wait).
 *===----------------------------------------------------------------------===*/

#define ZRT_COLLECTIVE(KIND, name, Name, shape, elements, traffic, params,     \
                       args)                                                   \
  int64_t zrt_##name##_start params;
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
/* Blocks until the collective of `handle` has completed on this rank. */
void zrt_wait(zrt_context *ctx, int64_t handle);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_ZRT_H */
