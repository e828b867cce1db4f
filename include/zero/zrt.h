/*===- zrt.h - zero-opt runtime C ABI ------------------------------*- C -*-===*
 *
 * The one contract between code that zero-opt generates and libzrt, the
 * runtime that executes it. Plain C: no MLIR, LLVM or C++ type crosses it.
 *
 * The compiler's lowering (passes/LowerToRuntime.cpp) emits calls to exactly
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

#define ZRT_ABI_VERSION 7

typedef struct zrt_context zrt_context;

/* Element types of float tensors. bf16 is stored as the upper 16 bits of an
 * IEEE float32 (round-to-nearest-even on conversion); kernels compute and
 * accumulate in float32 whatever the storage type. */
typedef enum zrt_dtype { ZRT_F32 = 0, ZRT_BF16 = 1 } zrt_dtype;

/*===--- Program description ----------------------------------------------===*
 * A generated program exports two functions (names below). The runtime's
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
  ZRT_ROLE_GRAD_ACCUM = 12 /* float32 accumulator of the reduced gradient
                            of the named parameter (full or shard) over
                            the micro-batches of a step; zeroed          */
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
  ZRT_MEM_NUM_CATEGORIES = 6
} zrt_mem_category;

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

/* Exported by the generated object (not by libzrt). */
void zero_program_describe(zrt_context *ctx);
/* `args[i]` is the buffer of argument i; `loss` receives this micro-batch's
 * share of the step's global mean loss (the same value on every rank): the
 * step's loss is the sum over its micro-batches. */
void zero_program_step(zrt_context *ctx, void **args, float *loss);
/* The optimizer step after the micro-batches (empty without gradient
 * accumulation, where zero_program_step updates the state itself). */
void zero_program_apply(zrt_context *ctx, void **args);

/*===--- Memory -----------------------------------------------------------===*/

/* Allocates `bytes` (64-byte aligned, zero-filled) and charges the ledger of
 * `category`. Never returns NULL: failure stops the job with a message. */
void *zrt_alloc(zrt_context *ctx, int64_t bytes, int32_t category);
void zrt_free(zrt_context *ctx, void *ptr);

/* The compiler's memory plan (zero-plan-memory), binding: the temporaries of
 * `category` live at planned offsets in one block of `bytes`, its arena.
 * zero_program_describe declares each arena once; the runtime allocates the
 * block then (one allocation per arena, on a device too), before the first
 * step. The step and apply functions share it (they never run at once). */
void zrt_declare_arena(zrt_context *ctx, int32_t category, int64_t bytes);
/* A temporary at its planned place: `bytes` at `offset` of the arena of
 * `category`, zero-filled and charged to the ledger as zrt_alloc does; freed
 * with zrt_free (which gives the range back to the plan, not to the
 * allocator). A range outside the declared arena stops the job with a
 * message. */
void *zrt_alloc_in_arena(zrt_context *ctx, int64_t bytes, int32_t category,
                         int64_t offset);

/*===--- Kernels (CPU backend: OpenBLAS + plain loops) --------------------===*
 * `dtype` is the element type of every float tensor argument of the kernel
 * unless stated; scalars passed by pointer (loss, lr, step, norms) are always
 * float32. "In place allowed" means an output may alias the input named.
 *===----------------------------------------------------------------------===*/

/* c[m,n] = op(a)[m,k] * op(b)[k,n]; op transposes when trans_* != 0 (a is
 * then stored k x m, b stored n x k). float32 accumulation. */
void zrt_matmul(zrt_context *ctx, int32_t dtype, const void *a, const void *b,
                void *c, int64_t m, int64_t n, int64_t k, int32_t trans_a,
                int32_t trans_b);
/* What zrt_matmul_bias does after the product. */
typedef enum zrt_epilogue {
  ZRT_EPILOGUE_BIAS = 0,     /* c = op(a) op(b) + bias                   */
  ZRT_EPILOGUE_BIAS_GELU = 1 /* pre = op(a) op(b) + bias, c = gelu(pre) */
} zrt_epilogue;
/* A linear layer (nn.matmul_bias, nn.matmul_bias_gelu): the product with
 * zrt_matmul's conventions, plus bias[n] on every row, then the epilogue's
 * activation (zrt_gelu's tanh GELU). With ZRT_EPILOGUE_BIAS_GELU the sum
 * before GELU is also written to pre_activation ([m,n]), which GELU's
 * gradient reads; with ZRT_EPILOGUE_BIAS pre_activation must be NULL.
 * On the GPU one GEMM with a fused epilogue; on the CPU zrt_matmul,
 * zrt_bias_add and zrt_gelu in sequence (the same results as those calls). */
void zrt_matmul_bias(zrt_context *ctx, int32_t dtype, const void *a,
                     const void *b, const void *bias, void *c,
                     void *pre_activation, int64_t m, int64_t n, int64_t k,
                     int32_t trans_a, int32_t trans_b, int32_t epilogue);
/* y[r,c] = x[r,c] + bias[c]. In place allowed (y == x). */
void zrt_bias_add(zrt_context *ctx, int32_t dtype, const void *x,
                  const void *bias, void *y, int64_t rows, int64_t cols);
/* y[c] = sum_r x[r,c] (the gradient of a bias). */
void zrt_sum_rows(zrt_context *ctx, int32_t dtype, const void *x, void *y,
                  int64_t rows, int64_t cols);
/* y = a + b, elementwise. In place allowed (y == a or y == b). */
void zrt_add(zrt_context *ctx, int32_t dtype, const void *a, const void *b,
             void *y, int64_t n);
void zrt_relu(zrt_context *ctx, int32_t dtype, const void *x, void *y,
              int64_t n);
/* dx = dy * (x > 0). In place allowed (dx == dy). */
void zrt_relu_grad(zrt_context *ctx, int32_t dtype, const void *x,
                   const void *dy, void *dx, int64_t n);
/* GELU, tanh approximation (as GPT-2):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
void zrt_gelu(zrt_context *ctx, int32_t dtype, const void *x, void *y,
              int64_t n);
/* In place allowed (dx == dy). */
void zrt_gelu_grad(zrt_context *ctx, int32_t dtype, const void *x,
                   const void *dy, void *dx, int64_t n);
/* y = silu(gate) * up, silu(g) = g * sigmoid(g) (Llama's MLP). */
void zrt_swiglu(zrt_context *ctx, int32_t dtype, const void *gate,
                const void *up, void *y, int64_t n);
void zrt_swiglu_grad(zrt_context *ctx, int32_t dtype, const void *gate,
                     const void *up, const void *dy, void *dgate, void *dup,
                     int64_t n);
/* loss[0] = sum_r (logsumexp(logits[r,:]) - logits[r, labels[r]]) / divisor.
 * A label outside [0, cols) stops the job with a message. loss is float32. */
void zrt_softmax_xent(zrt_context *ctx, int32_t dtype, const void *logits,
                      const int32_t *labels, float *loss, int64_t rows,
                      int64_t cols, float divisor);
/* dlogits[r,c] = dloss[0] * (softmax(logits[r,:])[c] - (c == labels[r]))
 *                / divisor. dloss is float32. */
void zrt_softmax_xent_grad(zrt_context *ctx, int32_t dtype,
                           const void *logits, const int32_t *labels,
                           const float *dloss, void *dlogits, int64_t rows,
                           int64_t cols, float divisor);
/* out[i,:] = table[ids[i],:] for i < n; table is vocab x dim. An id outside
 * [0, vocab) stops the job with a message naming the row and the id. */
void zrt_embedding(zrt_context *ctx, int32_t dtype, const int32_t *ids,
                   const void *table, void *out, int64_t n, int64_t vocab,
                   int64_t dim);
/* dtable = 0, then dtable[ids[i],:] += dout[i,:] (float32 accumulation). */
void zrt_embedding_grad(zrt_context *ctx, int32_t dtype, const int32_t *ids,
                        const void *dout, void *dtable, int64_t n,
                        int64_t vocab, int64_t dim);
/* Row-wise LayerNorm: y = (x - mean) / sqrt(var + eps) * gamma + beta
 * (biased variance, as torch.nn.LayerNorm). */
void zrt_layer_norm(zrt_context *ctx, int32_t dtype, const void *x,
                    const void *gamma, const void *beta, void *y, int64_t rows,
                    int64_t cols, float eps);
/* Recomputes the row statistics; writes dx, dgamma, dbeta (the last two
 * summed over rows). */
void zrt_layer_norm_grad(zrt_context *ctx, int32_t dtype, const void *x,
                         const void *gamma, const void *dy, void *dx,
                         void *dgamma, void *dbeta, int64_t rows, int64_t cols,
                         float eps);
/* Row-wise RMSNorm (Llama): y = x / sqrt(mean(x^2) + eps) * gamma. */
void zrt_rms_norm(zrt_context *ctx, int32_t dtype, const void *x,
                  const void *gamma, void *y, int64_t rows, int64_t cols,
                  float eps);
void zrt_rms_norm_grad(zrt_context *ctx, int32_t dtype, const void *x,
                       const void *gamma, const void *dy, void *dx,
                       void *dgamma, int64_t rows, int64_t cols, float eps);
/* Rotary position embedding on x = [batch*seq, heads*head_dim], as Hugging
 * Face Llama (rotate_half: element i pairs with i + head_dim/2 within each
 * head; angle pos * inv_freq[i] in float32, pos = row % seq). inv_freq is
 * head_dim/2 float32 frequencies in host memory, read during the call: the
 * compiler computes them (base and scaling, nn.rope). `inverse` != 0
 * rotates by the negative angle: the gradient. In place allowed. */
void zrt_rope(zrt_context *ctx, int32_t dtype, const void *x, void *y,
              int64_t batch, int64_t seq, int64_t heads, int64_t head_dim,
              const float *inv_freq, int32_t inverse);
/* Causal scaled-dot-product attention with grouped-query heads.
 * q: [batch*seq, heads*head_dim]; k, v: [batch*seq, kv_heads*head_dim];
 * query head h reads kv head h / (heads / kv_heads); scale 1/sqrt(head_dim).
 * out: [batch*seq, heads*head_dim]. No T x T matrix is kept. */
void zrt_attention(zrt_context *ctx, int32_t dtype, const void *q,
                   const void *k, const void *v, void *out, int64_t batch,
                   int64_t seq, int64_t heads, int64_t kv_heads,
                   int64_t head_dim);
/* Gradients of zrt_attention (recomputing the softmax row by row). */
void zrt_attention_grad(zrt_context *ctx, int32_t dtype, const void *q,
                        const void *k, const void *v, const void *dout,
                        void *dq, void *dk, void *dv, int64_t batch,
                        int64_t seq, int64_t heads, int64_t kv_heads,
                        int64_t head_dim);
/* y[r, 0..size) = x[r, offset..offset+size) for r < rows; x has cols
 * columns (the query, key and value blocks of a fused projection). */
void zrt_slice_cols(zrt_context *ctx, int32_t dtype, const void *x, void *y,
                    int64_t rows, int64_t cols, int64_t offset, int64_t size);
/* The gradient of zrt_slice_cols: dx = 0 but for
 * dx[r, offset..offset+size) = dy[r, 0..size); dx has cols columns. */
void zrt_slice_cols_grad(zrt_context *ctx, int32_t dtype, const void *dy,
                         void *dx, int64_t rows, int64_t cols, int64_t offset,
                         int64_t size);
/* dst = src converted from src_dtype to dst_dtype (bf16: round to nearest
 * even). */
void zrt_cast(zrt_context *ctx, int32_t src_dtype, int32_t dst_dtype,
              const void *src, void *dst, int64_t n);
/* out[0] = sum_i x[i]^2, in float32. */
void zrt_sum_squares(zrt_context *ctx, int32_t dtype, const void *x,
                     float *out, int64_t n);
/* coef[0] = max_norm[0] > 0 ? min(1, max_norm / (sqrt(total_sq) + 1e-6)) : 1
 * (torch.nn.utils.clip_grad_norm_). */
void zrt_clip_coefficient(zrt_context *ctx, const float *total_sq,
                          const float *max_norm, float *coef);
/* Decoupled-weight-decay Adam (Loshchilov & Hutter), as torch.optim.AdamW,
 * on float32 parameters (or master weights) p and moments m, v, with the
 * gradient g of type `grad_dtype` scaled by grad_scale[0] (NULL means 1):
 *   g = g * scale; p <- p - lr*wd*p; m <- b1 m + (1-b1) g; v <- b2 v + (1-b2) g^2
 *   p <- p - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
 * lr and t (the 1-based step, as float) are read from 1-element buffers.
 * p_out/m_out/v_out may equal p/m/v (in place). */
void zrt_adamw(zrt_context *ctx, int32_t grad_dtype, const float *p,
               const void *g, const float *m, const float *v, float *p_out,
               float *m_out, float *v_out, int64_t n, const float *lr,
               const float *step, const float *grad_scale, float beta1,
               float beta2, float eps, float weight_decay);
void zrt_copy(zrt_context *ctx, const void *src, void *dst, int64_t bytes);
void zrt_fill(zrt_context *ctx, int32_t dtype, void *dst, int64_t n,
              float value);
/* shard[0..S) = this rank's slice of full[0..numel), zero padded. */
void zrt_shard_slice(zrt_context *ctx, int32_t dtype, const void *full,
                     void *shard, int64_t numel, int64_t shard_numel);

/*===--- Collectives over the data-parallel group (MPI on the CPU) --------===*
 * bf16 tensors travel as bf16 (2 bytes an element); sums of bf16 accumulate
 * in float32 per pair of operands (a custom MPI_Op).
 *===----------------------------------------------------------------------===*/

/* The one traffic formula: what the runtime's ledger counts, --report
 * predicts and the zero dialect's CollectiveOpInterface answers. A rank is
 * charged the ZeRO paper's data volume: an all-gather or a reduce-scatter of
 * an N-element tensor in shards of S moves the padded tensor, W * S elements
 * (as MPI and NCCL do; S = ceil(N / W) in generated code), an all-reduce
 * twice its buffer (a reduce-scatter plus an all-gather). So stages 0-2 move
 * 2 Psi a step, stage 3 3 Psi. */
typedef enum zrt_collective {
  ZRT_ALL_GATHER = 0,
  ZRT_REDUCE_SCATTER = 1,
  ZRT_ALL_REDUCE = 2
} zrt_collective;
static inline int64_t zrt_traffic_elements(zrt_collective kind, int64_t numel,
                                           int64_t shard_numel,
                                           int64_t world_size) {
  return kind == ZRT_ALL_REDUCE ? 2 * numel : world_size * shard_numel;
}

/* full[0..numel) = the first numel elements of the concatenation over ranks
 * of shard[0..S) (the padding is dropped; full needs only numel elements). */
void zrt_all_gather(zrt_context *ctx, int32_t dtype, const void *shard,
                    void *full, int64_t numel, int64_t shard_numel);
/* shard[0..S) = this rank's slice of the elementwise sum over ranks of
 * full[0..numel) (zero padded to W*S). */
void zrt_reduce_scatter(zrt_context *ctx, int32_t dtype, const void *full,
                        void *shard, int64_t numel, int64_t shard_numel);
/* y = elementwise sum over ranks of x. In place allowed. */
void zrt_all_reduce(zrt_context *ctx, int32_t dtype, const void *x, void *y,
                    int64_t n);

/*===--- Asynchronous collectives -----------------------------------------===*
 * The same collectives, started now and completed later so that they
 * overlap the kernels issued in between. They run in the order started, on
 * the runtime's communication thread (CPU backend) or stream (CUDA). The
 * returned handle (> 0) is waited for exactly once; until then the buffers
 * the collective reads or writes must not be touched. Bytes are counted
 * when the collective starts, as for the blocking forms (which behave as a
 * start followed at once by a wait).
 *===----------------------------------------------------------------------===*/

int64_t zrt_all_gather_start(zrt_context *ctx, int32_t dtype,
                             const void *shard, void *full, int64_t numel,
                             int64_t shard_numel);
int64_t zrt_reduce_scatter_start(zrt_context *ctx, int32_t dtype,
                                 const void *full, void *shard, int64_t numel,
                                 int64_t shard_numel);
int64_t zrt_all_reduce_start(zrt_context *ctx, int32_t dtype, const void *x,
                             void *y, int64_t n);
/* Blocks until the collective of `handle` has completed on this rank. */
void zrt_wait(zrt_context *ctx, int64_t handle);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_ZRT_H */
