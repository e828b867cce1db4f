/*===- cuda_sample.c - A stand-in for generated code, on either backend ----===*
 *
 * sample/sample_program.c's MLP (x -> fc1 -> GELU -> fc2 -> softmax
 * cross-entropy, AdamW through sample_common.c) with the one difference that
 * generated code has too: the loss reaches the driver through zrt_copy, so
 * the program never reads a buffer on the host and runs unchanged when the
 * buffers live on a GPU (--device=cuda). The lit tests run it on both
 * backends and compare the losses (test/runtime/cuda-driver.test).
 * Knobs: sample_common.h (without SAMPLE_CLIP, whose host-side sum of the
 * squared norms is CPU-only), and SAMPLE_GLOBAL_BATCH (default 24).
 *
 *===----------------------------------------------------------------------===*/

#include "sample_common.h"

#ifndef SAMPLE_GLOBAL_BATCH
#define SAMPLE_GLOBAL_BATCH 24
#endif

#if SAMPLE_CLIP
#error                                                                         \
    "cuda_sample.c reads no buffer on the host; clipping in sample_common.c does"
#endif

enum { B = SAMPLE_GLOBAL_BATCH, BL = B / W };
enum { F = 10, H = 13, C = 5 };

enum { ARG_X, ARG_Y, ARG_LR, ARG_STEP, ARG_PARAM0 };
enum { W1, B1, W2, B2, NUM_PARAMS };

static const struct SampleParam kParams[NUM_PARAMS] = {
    {"fc1.weight", 2, F, H, ZRT_INIT_UNIFORM, 0.31622776f}, /* 1/sqrt(F) */
    {"fc1.bias", 1, H, 0, ZRT_INIT_UNIFORM, 0.31622776f},
    {"fc2.weight", 2, H, C, ZRT_INIT_UNIFORM, 0.27735010f}, /* 1/sqrt(H) */
    {"fc2.bias", 1, C, 0, ZRT_INIT_UNIFORM, 0.27735010f},
};

static const struct SampleState kState = {kParams, NUM_PARAMS, ARG_PARAM0,
                                          ARG_LR,  ARG_STEP,   -1};

void zero_program_describe(zrt_context *ctx) {
  zrt_declare_program(ctx, SAMPLE_ABI_VERSION, W, SAMPLE_STAGE,
                      ZRT_TASK_CLASSIFY, B, 1, F, C);
  zrt_declare_arg(ctx, ARG_X, "x", ZRT_ROLE_FEATURES, DT, 2, BL, F, 0, 0, 0, 0,
                  0.0f);
  zrt_declare_arg(ctx, ARG_Y, "y", ZRT_ROLE_LABELS, ZRT_F32, 1, BL, 0, 0, 0, 0,
                  0, 0.0f);
  zrt_declare_arg(ctx, ARG_LR, "lr", ZRT_ROLE_LR, ZRT_F32, 0, 0, 0, 0, 0, 0, 0,
                  0.0f);
  zrt_declare_arg(ctx, ARG_STEP, "step", ZRT_ROLE_STEP, ZRT_F32, 0, 0, 0, 0, 0,
                  0, 0, 0.0f);
  sampleDeclareState(ctx, &kState);
}

void zero_program_step(zrt_context *ctx, void **args, float *loss) {
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

  /* Backward, scaled by the global batch (see sample_program.c). */
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

  /* The loss as generated code returns it: a copy into the driver's slot. */
  zrt_all_reduce(ctx, ZRT_F32, lossBuf, lossBuf, 1);
  zrt_copy(ctx, lossBuf, loss, 4);
  sampleUpdate(ctx, args, &kState, grad);
  void *scratch[] = {h, a, logits, lossBuf, one, dlogits, da, dh};
  for (size_t i = 0; i < sizeof(scratch) / sizeof(scratch[0]); ++i)
    zrt_free(ctx, scratch[i]);
}
