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

#define ZRT_ABI_VERSION 1

typedef struct zrt_context zrt_context;

/*===--- Program description ----------------------------------------------===*
 * A generated program exports two functions (names below). The runtime's
 * main calls zero_program_describe once, which calls zrt_declare_program
 * once and zrt_declare_arg once per argument of the step function, in
 * argument order. The runtime then allocates and initialises one buffer per
 * argument and calls zero_program_step once per training step with the array
 * of those buffers.
 *===----------------------------------------------------------------------===*/

/* What a step-function argument holds; decides how the runtime fills it. */
typedef enum zrt_role {
  ZRT_ROLE_FEATURES = 0, /* this rank's rows of the input batch (float32) */
  ZRT_ROLE_LABELS = 1,   /* this rank's class labels (int32)              */
  ZRT_ROLE_PARAM = 2,    /* a trainable parameter (full or shard)         */
  ZRT_ROLE_ADAM_M = 3,   /* AdamW first moment (full or shard), zeroed    */
  ZRT_ROLE_ADAM_V = 4,   /* AdamW second moment (full or shard), zeroed   */
  ZRT_ROLE_LR = 5,       /* scalar float32 learning rate (--lr)           */
  ZRT_ROLE_STEP = 6      /* scalar float32 1-based step count             */
} zrt_role;

/* How a parameter is initialised. Values are drawn from a counter-based
 * generator keyed on (seed, parameter name, flat element index), so every
 * world size and stage initialises the same full tensor. */
typedef enum zrt_init {
  ZRT_INIT_ZEROS = 0,
  ZRT_INIT_UNIFORM = 1, /* U(-scale, scale), e.g. 1/sqrt(fan_in) */
  ZRT_INIT_NORMAL = 2   /* N(0, scale^2)                         */
} zrt_init;

/* Memory categories for the allocator's ledger. */
typedef enum zrt_mem_category {
  ZRT_MEM_PARAM = 0,
  ZRT_MEM_GRAD = 1,
  ZRT_MEM_OPTIMIZER = 2,
  ZRT_MEM_ACTIVATION = 3,
  ZRT_MEM_COMM = 4, /* gathered copies and collective staging buffers */
  ZRT_MEM_DATA = 5,
  ZRT_MEM_NUM_CATEGORIES = 6
} zrt_mem_category;

/* Declares the program: ABI version, compiled world size and ZeRO stage, and
 * the data set shape (global batch rows, features per row, classes). */
void zrt_declare_program(zrt_context *ctx, int64_t abi_version,
                         int64_t world_size, int64_t stage,
                         int64_t global_batch, int64_t num_features,
                         int64_t num_classes);

/* Declares step argument `index`. `numel` is the full tensor's element
 * count; `sharded` != 0 means the buffer holds this rank's shard of it
 * (ceil(numel / world_size) elements). Parameters are initialised by
 * `init` with `init_scale`; other roles ignore both. */
void zrt_declare_arg(zrt_context *ctx, int64_t index, const char *name,
                     int32_t role, int64_t numel, int32_t sharded,
                     int32_t init, float init_scale);

/* Exported by the generated object (not by libzrt). */
void zero_program_describe(zrt_context *ctx);
/* `args[i]` is the buffer of argument i; `loss` receives the global mean
 * loss of this step (the same value on every rank). */
void zero_program_step(zrt_context *ctx, void **args, float *loss);

/*===--- Memory -----------------------------------------------------------===*/

/* Allocates `bytes` (64-byte aligned, zero-filled) and charges the ledger of
 * `category`. Never returns NULL: failure stops the job with a message. */
void *zrt_alloc(zrt_context *ctx, int64_t bytes, int32_t category);
void zrt_free(zrt_context *ctx, void *ptr);

/*===--- Kernels (CPU backend: OpenBLAS + plain loops) --------------------===*/

/* c[m,n] = op(a)[m,k] * op(b)[k,n]; op transposes when trans_* != 0 (a is
 * then stored k x m, b stored n x k). */
void zrt_matmul(zrt_context *ctx, const float *a, const float *b, float *c,
                int64_t m, int64_t n, int64_t k, int32_t trans_a,
                int32_t trans_b);
/* y[r,c] = x[r,c] + bias[c]. In place allowed. */
void zrt_bias_add(zrt_context *ctx, const float *x, const float *bias,
                  float *y, int64_t rows, int64_t cols);
/* y[c] = sum_r x[r,c] (the gradient of a bias). */
void zrt_sum_rows(zrt_context *ctx, const float *x, float *y, int64_t rows,
                  int64_t cols);
/* y = a + b, elementwise. In place allowed. */
void zrt_add(zrt_context *ctx, const float *a, const float *b, float *y,
             int64_t n);
void zrt_relu(zrt_context *ctx, const float *x, float *y, int64_t n);
/* dx = dy * (x > 0) */
void zrt_relu_grad(zrt_context *ctx, const float *x, const float *dy,
                   float *dx, int64_t n);
/* GELU, tanh approximation (as GPT-2):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
void zrt_gelu(zrt_context *ctx, const float *x, float *y, int64_t n);
void zrt_gelu_grad(zrt_context *ctx, const float *x, const float *dy,
                   float *dx, int64_t n);
/* loss[0] = sum_r (logsumexp(logits[r,:]) - logits[r, labels[r]]) / divisor.
 * A label outside [0, cols) stops the job with a message. */
void zrt_softmax_xent(zrt_context *ctx, const float *logits,
                      const int32_t *labels, float *loss, int64_t rows,
                      int64_t cols, float divisor);
/* dlogits[r,c] = dloss[0] * (softmax(logits[r,:])[c] - (c == labels[r]))
 *                / divisor */
void zrt_softmax_xent_grad(zrt_context *ctx, const float *logits,
                           const int32_t *labels, const float *dloss,
                           float *dlogits, int64_t rows, int64_t cols,
                           float divisor);
/* Decoupled-weight-decay Adam (Loshchilov & Hutter), as torch.optim.AdamW:
 *   p <- p - lr*wd*p;  m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g^2
 *   p <- p - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
 * lr and t (the 1-based step, as float) are read from 1-element buffers.
 * p_out/m_out/v_out may equal p/m/v (in place). */
void zrt_adamw(zrt_context *ctx, const float *p, const float *g,
               const float *m, const float *v, float *p_out, float *m_out,
               float *v_out, int64_t n, const float *lr, const float *step,
               float beta1, float beta2, float eps, float weight_decay);
void zrt_copy(zrt_context *ctx, const void *src, void *dst, int64_t bytes);
void zrt_fill(zrt_context *ctx, float *dst, int64_t n, float value);
/* shard[0..S) = this rank's slice of full[0..numel), zero padded. */
void zrt_shard_slice(zrt_context *ctx, const float *full, float *shard,
                     int64_t numel, int64_t shard_numel);

/*===--- Collectives over the data-parallel group (MPI on the CPU) --------===*/

/* full[0..numel) = the first numel elements of the concatenation over ranks
 * of shard[0..S) (the padding is dropped; full needs only numel elements). */
void zrt_all_gather(zrt_context *ctx, const float *shard, float *full,
                    int64_t numel, int64_t shard_numel);
/* shard[0..S) = this rank's slice of the elementwise sum over ranks of
 * full[0..numel) (zero padded to W*S). */
void zrt_reduce_scatter(zrt_context *ctx, const float *full, float *shard,
                        int64_t numel, int64_t shard_numel);
/* y = elementwise sum over ranks of x. In place allowed. */
void zrt_all_reduce(zrt_context *ctx, const float *x, float *y, int64_t n);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_ZRT_H */
