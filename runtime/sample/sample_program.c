/*===- sample_program.c - A hand-written stand-in for generated code ------===*
 *
 * A one-hidden-layer MLP (x -> fc1 -> GELU -> fc2 -> softmax cross-entropy)
 * trained with AdamW on the synthetic classification task, written against
 * zrt.h the way zero-opt's lowering emits code: every buffer from zrt_alloc,
 * every kernel and collective a zrt_* call. It lets the driver, the data and
 * the collectives be tested without the compiler. Knobs: sample_common.h,
 * and SAMPLE_GLOBAL_BATCH, the rows per step over all ranks (default 24).
 *
 *===----------------------------------------------------------------------===*/

#include "sample_common.h"

#include <math.h>

#ifndef SAMPLE_GLOBAL_BATCH
#define SAMPLE_GLOBAL_BATCH 24
#endif

/* Odd sizes on purpose: no parameter divides evenly over 2, 3 or 4 ranks
 * except by chance, so shards carry padding. */
enum { B = SAMPLE_GLOBAL_BATCH, BL = B / W };
enum { F = 10, H = 13, C = 5 };

/* Step arguments, in declaration order; the state follows. */
enum { ARG_X, ARG_Y, ARG_LR, ARG_STEP, ARG_MAX_NORM };
enum { ARG_PARAM0 = SAMPLE_CLIP ? ARG_MAX_NORM + 1 : ARG_MAX_NORM };
enum { W1, B1, W2, B2, NUM_PARAMS };

static const struct SampleParam kParams[NUM_PARAMS] = {
    {"fc1.weight", 2, F, H, ZRT_INIT_UNIFORM, 0.31622776f}, /* 1/sqrt(F) */
    {"fc1.bias", 1, H, 0, ZRT_INIT_UNIFORM, 0.31622776f},
    {"fc2.weight", 2, H, C, ZRT_INIT_UNIFORM, 0.27735010f}, /* 1/sqrt(H) */
    {"fc2.bias", 1, C, 0, ZRT_INIT_UNIFORM, 0.27735010f},
};

static const struct SampleState kState = {
    kParams, NUM_PARAMS, ARG_PARAM0,
    ARG_LR,  ARG_STEP,   SAMPLE_CLIP ? ARG_MAX_NORM : -1};

void zero_program_describe(zrt_context *ctx) {
  zrt_declare_program(ctx, SAMPLE_ABI_VERSION, W, SAMPLE_STAGE,
                      ZRT_TASK_CLASSIFY, B, 1, F, C);
  sampleDeclareShardGroups(ctx);
  zrt_declare_arg(ctx, ARG_X, "x", ZRT_ROLE_FEATURES, DT, 2, BL, F, 0, 0, 0, 0,
                  0.0f);
  zrt_declare_arg(ctx, ARG_Y, "y", ZRT_ROLE_LABELS, ZRT_F32, 1, BL, 0, 0, 0, 0,
                  0, 0.0f);
  zrt_declare_arg(ctx, ARG_LR, "lr", ZRT_ROLE_LR, ZRT_F32, 0, 0, 0, 0, 0, 0, 0,
                  0.0f);
  zrt_declare_arg(ctx, ARG_STEP, "step", ZRT_ROLE_STEP, ZRT_F32, 0, 0, 0, 0, 0,
                  0, 0, 0.0f);
  if (SAMPLE_CLIP)
    zrt_declare_arg(ctx, ARG_MAX_NORM, "max_norm", ZRT_ROLE_MAX_NORM, ZRT_F32,
                    0, 0, 0, 0, 0, 0, 0, 0.0f);
  sampleDeclareState(ctx, &kState);
}

void zero_program_step(zrt_context *ctx, void **args, void *loss) {
  const void *x = args[ARG_X];
  const int32_t *y = (const int32_t *)args[ARG_Y];
  void *h = sampleAlloc(ctx, BL * H, ZRT_MEM_ACTIVATION);
  void *a = sampleAlloc(ctx, BL * H, ZRT_MEM_ACTIVATION);
  void *logits = sampleAlloc(ctx, BL * C, ZRT_MEM_ACTIVATION);
  float *lossBuf = zrt_alloc(ctx, 4, ZRT_MEM_ACTIVATION);

  /* Forward. */
  void *w[NUM_PARAMS];
  for (int i = 0; i < NUM_PARAMS; ++i)
    w[i] = sampleGather(ctx, args, &kState, i);
  zrt_matmul(ctx, DT, x, w[W1], h, BL, H, F, 0, 0);
  zrt_bias_add(ctx, DT, h, w[B1], h, BL, H);
  zrt_gelu(ctx, DT, h, a, BL * H);
  zrt_matmul(ctx, DT, a, w[W2], logits, BL, C, H, 0, 0);
  zrt_bias_add(ctx, DT, logits, w[B2], logits, BL, C);
  zrt_softmax_xent(ctx, DT, logits, y, lossBuf, BL, C, (float)B);
  for (int i = 0; i < NUM_PARAMS; ++i)
    if (i != W2)
      sampleRelease(ctx, w[i]);

  /* Backward: gradients of the local rows, scaled by the global batch so
   * that their sum over ranks is the full-batch gradient. */
  float *one = zrt_alloc(ctx, 4, ZRT_MEM_ACTIVATION);
  void *dlogits = sampleAlloc(ctx, BL * C, ZRT_MEM_ACTIVATION);
  void *da = sampleAlloc(ctx, BL * H, ZRT_MEM_ACTIVATION);
  void *dh = sampleAlloc(ctx, BL * H, ZRT_MEM_ACTIVATION);
  void *grad[NUM_PARAMS];
  for (int i = 0; i < NUM_PARAMS; ++i)
    grad[i] = sampleAlloc(ctx, sampleNumel(&kParams[i]), ZRT_MEM_GRAD);
  zrt_fill(ctx, ZRT_F32, one, 1, 1.0f);
  zrt_softmax_xent_grad(ctx, DT, logits, y, one, dlogits, BL, C, (float)B);
  zrt_matmul(ctx, DT, a, dlogits, grad[W2], H, C, BL, 1, 0);
  zrt_sum_rows(ctx, DT, dlogits, grad[B2], BL, C);
  zrt_matmul(ctx, DT, dlogits, w[W2], da, BL, H, C, 0, 1);
  sampleRelease(ctx, w[W2]);
  zrt_gelu_grad(ctx, DT, h, da, dh, BL * H);
  zrt_matmul(ctx, DT, x, dh, grad[W1], F, H, BL, 1, 0);
  zrt_sum_rows(ctx, DT, dh, grad[B1], BL, H);

  zrt_all_reduce(ctx, ZRT_GROUP_WORLD, ZRT_F32, lossBuf, lossBuf, 1, "loss");
  /* Through the runtime: on a GPU the buffer is device memory. */
  zrt_copy(ctx, lossBuf, loss, sizeof(float));
  sampleUpdate(ctx, args, &kState, grad);
  void *scratch[] = {h, a, logits, lossBuf, one, dlogits, da, dh};
  for (size_t i = 0; i < sizeof(scratch) / sizeof(scratch[0]); ++i)
    zrt_free(ctx, scratch[i]);
}
