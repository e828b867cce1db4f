/*===- sample_program.c - A hand-written stand-in for generated code ------===*
 *
 * A one-hidden-layer MLP (x -> fc1 -> GELU -> fc2 -> softmax cross-entropy)
 * trained with AdamW, written against zrt.h the way zero-opt's lowering
 * emits code: every buffer from zrt_alloc, every kernel and collective a zrt_*
 * call. It lets the driver, the data and the collectives be tested without
 * the compiler. Build-time knobs stand in for zero-opt's flags:
 *   SAMPLE_WORLD_SIZE    --world-size (default 1)
 *   SAMPLE_STAGE         --stage: 0 replicates everything, 1 and 2 shard the
 *                        moments and reduce-scatter gradients, 3 also shards
 *                        the parameters (default 0)
 *   SAMPLE_GLOBAL_BATCH  rows per step over all ranks (default 24)
 *   SAMPLE_ABI_VERSION   the ABI version declared (default ZRT_ABI_VERSION)
 *
 *===----------------------------------------------------------------------===*/

#include "zero/zrt.h"

#include <math.h>
#include <stddef.h>

#ifndef SAMPLE_WORLD_SIZE
#define SAMPLE_WORLD_SIZE 1
#endif
#ifndef SAMPLE_STAGE
#define SAMPLE_STAGE 0
#endif
#ifndef SAMPLE_GLOBAL_BATCH
#define SAMPLE_GLOBAL_BATCH 24
#endif
#ifndef SAMPLE_ABI_VERSION
#define SAMPLE_ABI_VERSION ZRT_ABI_VERSION
#endif

/* Odd sizes on purpose: no parameter divides evenly over 2, 3 or 4 ranks
 * except by chance, so shards carry padding. */
enum { W = SAMPLE_WORLD_SIZE, B = SAMPLE_GLOBAL_BATCH, BL = B / W };
enum { F = 10, H = 13, C = 5 };
enum { SHARD_STATE = SAMPLE_STAGE >= 1, SHARD_PARAMS = SAMPLE_STAGE == 3 };

/* Step arguments, in declaration order. */
enum { ARG_X, ARG_Y, ARG_LR, ARG_STEP, ARG_PARAM0 };
enum { NUM_PARAMS = 4, ARG_M0 = ARG_PARAM0 + NUM_PARAMS };
enum { ARG_V0 = ARG_M0 + NUM_PARAMS, NUM_ARGS = ARG_V0 + NUM_PARAMS };
enum { W1, B1, W2, B2 };

struct ParamInfo {
  const char *name, *mName, *vName;
  int64_t numel;
  int64_t fanIn;
};
static const struct ParamInfo kParams[NUM_PARAMS] = {
    {"fc1.weight", "fc1.weight.adam_m", "fc1.weight.adam_v", F *H, F},
    {"fc1.bias", "fc1.bias.adam_m", "fc1.bias.adam_v", H, F},
    {"fc2.weight", "fc2.weight.adam_m", "fc2.weight.adam_v", H *C, H},
    {"fc2.bias", "fc2.bias.adam_m", "fc2.bias.adam_v", C, H},
};

static int64_t shardOf(int64_t numel) { return (numel + W - 1) / W; }

void zero_program_describe(zrt_context *ctx) {
  zrt_declare_program(ctx, SAMPLE_ABI_VERSION, W, SAMPLE_STAGE, B, F, C);
  zrt_declare_arg(ctx, ARG_X, "x", ZRT_ROLE_FEATURES, BL * F, 0, 0, 0.0f);
  zrt_declare_arg(ctx, ARG_Y, "y", ZRT_ROLE_LABELS, BL, 0, 0, 0.0f);
  zrt_declare_arg(ctx, ARG_LR, "lr", ZRT_ROLE_LR, 1, 0, 0, 0.0f);
  zrt_declare_arg(ctx, ARG_STEP, "step", ZRT_ROLE_STEP, 1, 0, 0, 0.0f);
  for (int i = 0; i < NUM_PARAMS; ++i) {
    const struct ParamInfo *p = &kParams[i];
    float scale = 1.0f / sqrtf((float)p->fanIn);
    zrt_declare_arg(ctx, ARG_PARAM0 + i, p->name, ZRT_ROLE_PARAM, p->numel,
                    SHARD_PARAMS, ZRT_INIT_UNIFORM, scale);
    zrt_declare_arg(ctx, ARG_M0 + i, p->mName, ZRT_ROLE_ADAM_M, p->numel,
                    SHARD_STATE, 0, 0.0f);
    zrt_declare_arg(ctx, ARG_V0 + i, p->vName, ZRT_ROLE_ADAM_V, p->numel,
                    SHARD_STATE, 0, 0.0f);
  }
}

static float *allocFloats(zrt_context *ctx, int64_t n, int32_t category) {
  return (float *)zrt_alloc(ctx, n * (int64_t)sizeof(float), category);
}

/* The full parameter i: the argument itself, or (stage 3) a gathered copy
 * the caller frees. */
static float *fullParam(zrt_context *ctx, void **args, int i) {
  if (!SHARD_PARAMS)
    return (float *)args[ARG_PARAM0 + i];
  int64_t n = kParams[i].numel;
  float *full = allocFloats(ctx, n, ZRT_MEM_COMM);
  zrt_all_gather(ctx, (const float *)args[ARG_PARAM0 + i], full, n, shardOf(n));
  return full;
}

static void releaseParam(zrt_context *ctx, float *full) {
  if (SHARD_PARAMS)
    zrt_free(ctx, full);
}

/* Sums gradient i over ranks and applies AdamW to what this rank owns. */
static void update(zrt_context *ctx, void **args, int i, float *grad) {
  int64_t n = kParams[i].numel;
  float *p = (float *)args[ARG_PARAM0 + i];
  float *m = (float *)args[ARG_M0 + i], *v = (float *)args[ARG_V0 + i];
  const float *lr = (const float *)args[ARG_LR];
  const float *t = (const float *)args[ARG_STEP];
  const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.01f;
  if (!SHARD_STATE) {
    zrt_all_reduce(ctx, grad, grad, n);
    zrt_adamw(ctx, p, grad, m, v, p, m, v, n, lr, t, b1, b2, eps, wd);
    return;
  }
  int64_t s = shardOf(n);
  float *gradShard = allocFloats(ctx, s, ZRT_MEM_GRAD);
  zrt_reduce_scatter(ctx, grad, gradShard, n, s);
  if (SHARD_PARAMS) {
    zrt_adamw(ctx, p, gradShard, m, v, p, m, v, s, lr, t, b1, b2, eps, wd);
  } else {
    /* Stages 1-2 keep the full parameter: update this rank's slice and
     * gather the slices back into it. */
    float *pShard = allocFloats(ctx, s, ZRT_MEM_PARAM);
    zrt_shard_slice(ctx, p, pShard, n, s);
    zrt_adamw(ctx, pShard, gradShard, m, v, pShard, m, v, s, lr, t, b1, b2, eps,
              wd);
    zrt_all_gather(ctx, pShard, p, n, s);
    zrt_free(ctx, pShard);
  }
  zrt_free(ctx, gradShard);
}

void zero_program_step(zrt_context *ctx, void **args, float *loss) {
  const float *x = (const float *)args[ARG_X];
  const int32_t *y = (const int32_t *)args[ARG_Y];
  float *h = allocFloats(ctx, BL * H, ZRT_MEM_ACTIVATION);
  float *a = allocFloats(ctx, BL * H, ZRT_MEM_ACTIVATION);
  float *logits = allocFloats(ctx, BL * C, ZRT_MEM_ACTIVATION);
  float *lossBuf = allocFloats(ctx, 1, ZRT_MEM_ACTIVATION);

  /* Forward. */
  float *w[NUM_PARAMS];
  for (int i = 0; i < NUM_PARAMS; ++i)
    w[i] = fullParam(ctx, args, i);
  zrt_matmul(ctx, x, w[W1], h, BL, H, F, 0, 0);
  zrt_bias_add(ctx, h, w[B1], h, BL, H);
  zrt_gelu(ctx, h, a, BL * H);
  zrt_matmul(ctx, a, w[W2], logits, BL, C, H, 0, 0);
  zrt_bias_add(ctx, logits, w[B2], logits, BL, C);
  zrt_softmax_xent(ctx, logits, y, lossBuf, BL, C, (float)B);
  for (int i = 0; i < NUM_PARAMS; ++i)
    if (i != W2)
      releaseParam(ctx, w[i]);

  /* Backward: gradients of the local rows, scaled by the global batch so
   * that their sum over ranks is the full-batch gradient. */
  float *one = allocFloats(ctx, 1, ZRT_MEM_ACTIVATION);
  float *dlogits = allocFloats(ctx, BL * C, ZRT_MEM_ACTIVATION);
  float *da = allocFloats(ctx, BL * H, ZRT_MEM_ACTIVATION);
  float *dh = allocFloats(ctx, BL * H, ZRT_MEM_ACTIVATION);
  float *grad[NUM_PARAMS];
  for (int i = 0; i < NUM_PARAMS; ++i)
    grad[i] = allocFloats(ctx, kParams[i].numel, ZRT_MEM_GRAD);
  zrt_fill(ctx, one, 1, 1.0f);
  zrt_softmax_xent_grad(ctx, logits, y, one, dlogits, BL, C, (float)B);
  zrt_matmul(ctx, a, dlogits, grad[W2], H, C, BL, 1, 0);
  zrt_sum_rows(ctx, dlogits, grad[B2], BL, C);
  zrt_matmul(ctx, dlogits, w[W2], da, BL, H, C, 0, 1);
  releaseParam(ctx, w[W2]);
  zrt_gelu_grad(ctx, h, da, dh, BL * H);
  zrt_matmul(ctx, x, dh, grad[W1], F, H, BL, 1, 0);
  zrt_sum_rows(ctx, dh, grad[B1], BL, H);

  zrt_all_reduce(ctx, lossBuf, lossBuf, 1);
  *loss = lossBuf[0];
  for (int i = 0; i < NUM_PARAMS; ++i) {
    update(ctx, args, i, grad[i]);
    zrt_free(ctx, grad[i]);
  }
  float *scratch[] = {h, a, logits, lossBuf, one, dlogits, da, dh};
  for (size_t i = 0; i < sizeof(scratch) / sizeof(scratch[0]); ++i)
    zrt_free(ctx, scratch[i]);
}
