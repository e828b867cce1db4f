/*===- sample_lm.c - A hand-written language model for the data path -----===*
 *
 * The smallest model that trains on a token file through every LM argument:
 * h = wte[token] + wpe[position], RMSNorm (gain initialised to ones), a
 * projection to the vocabulary and next-token cross-entropy: a bigram model
 * with a position bias. It tests the driver's token data, --init-from and
 * --save, not modelling. Knobs: sample_common.h, and
 *   SAMPLE_GLOBAL_BATCH  sequences per step over all ranks (default 12)
 *   SAMPLE_SEQ_LEN       tokens per sequence (default 8)
 *   SAMPLE_VOCAB         vocabulary size (default 256: bytes)
 *
 *===----------------------------------------------------------------------===*/

#include "sample_common.h"

#ifndef SAMPLE_GLOBAL_BATCH
#define SAMPLE_GLOBAL_BATCH 12
#endif
#ifndef SAMPLE_SEQ_LEN
#define SAMPLE_SEQ_LEN 8
#endif
#ifndef SAMPLE_VOCAB
#define SAMPLE_VOCAB 256
#endif

enum { B = SAMPLE_GLOBAL_BATCH, BL = B / W, T = SAMPLE_SEQ_LEN };
enum { V = SAMPLE_VOCAB, D = 12, N = BL * T };

enum { ARG_TOKENS, ARG_TARGETS, ARG_POSITIONS, ARG_LR, ARG_STEP };
enum { ARG_MAX_NORM = ARG_STEP + 1 };
enum { ARG_PARAM0 = SAMPLE_CLIP ? ARG_MAX_NORM + 1 : ARG_MAX_NORM };
enum { WTE, WPE, NORM, HEAD, NUM_PARAMS };

/* GPT-2's names, so that a Hugging Face file's "transformer." prefix is
 * what --init-from has to strip. */
static const struct SampleParam kParams[NUM_PARAMS] = {
    {"wte.weight", 2, V, D, ZRT_INIT_NORMAL, 0.02f},
    {"wpe.weight", 2, T, D, ZRT_INIT_NORMAL, 0.01f},
    {"ln_f.weight", 1, D, 0, ZRT_INIT_ONES, 0.0f},
    {"head.weight", 2, D, V, ZRT_INIT_UNIFORM, 0.28867513f}, /* 1/sqrt(D) */
};

static const struct SampleState kState = {
    kParams, NUM_PARAMS, ARG_PARAM0,
    ARG_LR,  ARG_STEP,   SAMPLE_CLIP ? ARG_MAX_NORM : -1};

static const float kEps = 1e-5f;

void zero_program_describe(zrt_context *ctx) {
  zrt_declare_program(ctx, SAMPLE_ABI_VERSION, W, SAMPLE_STAGE, ZRT_TASK_LM, B,
                      T, 0, V);
  sampleDeclareShardGroups(ctx);
  zrt_declare_arg(ctx, ARG_TOKENS, "tokens", ZRT_ROLE_TOKENS, ZRT_F32, 2, BL, T,
                  0, 0, 0, 0, 0.0f);
  zrt_declare_arg(ctx, ARG_TARGETS, "targets", ZRT_ROLE_TARGETS, ZRT_F32, 2, BL,
                  T, 0, 0, 0, 0, 0.0f);
  zrt_declare_arg(ctx, ARG_POSITIONS, "positions", ZRT_ROLE_POSITIONS, ZRT_F32,
                  2, BL, T, 0, 0, 0, 0, 0.0f);
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
  const int32_t *tokens = args[ARG_TOKENS], *targets = args[ARG_TARGETS];
  const int32_t *positions = args[ARG_POSITIONS];
  void *e = sampleAlloc(ctx, N * D, ZRT_MEM_ACTIVATION);
  void *p = sampleAlloc(ctx, N * D, ZRT_MEM_ACTIVATION);
  void *h = sampleAlloc(ctx, N * D, ZRT_MEM_ACTIVATION);
  void *logits = sampleAlloc(ctx, N * V, ZRT_MEM_ACTIVATION);
  void *dlogits = sampleAlloc(ctx, N * V, ZRT_MEM_ACTIVATION);
  float *lossBuf = zrt_alloc(ctx, 4, ZRT_MEM_ACTIVATION);
  float *one = zrt_alloc(ctx, 4, ZRT_MEM_ACTIVATION);
  void *w[NUM_PARAMS], *grad[NUM_PARAMS];
  for (int i = 0; i < NUM_PARAMS; ++i)
    w[i] = sampleGather(ctx, args, &kState, i);

  /* Forward; the mean is over every token of the global batch. */
  zrt_embedding(ctx, DT, tokens, w[WTE], e, N, V, D);
  zrt_embedding(ctx, DT, positions, w[WPE], p, N, T, D);
  zrt_add(ctx, DT, e, p, e, N * D);
  zrt_rms_norm(ctx, DT, e, w[NORM], h, N, D, kEps);
  zrt_matmul(ctx, DT, h, w[HEAD], logits, N, V, D, 0, 0);
  zrt_softmax_xent(ctx, DT, logits, targets, lossBuf, N, V, (float)(B * T));

  /* Backward, reusing p for dh and h for d(e + p). */
  for (int i = 0; i < NUM_PARAMS; ++i)
    grad[i] = sampleAlloc(ctx, sampleNumel(&kParams[i]), ZRT_MEM_GRAD);
  zrt_fill(ctx, ZRT_F32, one, 1, 1.0f);
  zrt_softmax_xent_grad(ctx, DT, logits, targets, one, dlogits, N, V,
                        (float)(B * T));
  zrt_matmul(ctx, DT, h, dlogits, grad[HEAD], D, V, N, 1, 0);
  zrt_matmul(ctx, DT, dlogits, w[HEAD], p, N, D, V, 0, 1);
  zrt_rms_norm_grad(ctx, DT, e, w[NORM], p, h, grad[NORM], N, D, kEps);
  zrt_embedding_grad(ctx, DT, tokens, h, grad[WTE], N, V, D);
  zrt_embedding_grad(ctx, DT, positions, h, grad[WPE], N, T, D);
  for (int i = 0; i < NUM_PARAMS; ++i)
    sampleRelease(ctx, w[i]);

  zrt_all_reduce(ctx, ZRT_GROUP_WORLD, ZRT_F32, lossBuf, lossBuf, 1, "loss");
  /* Through the runtime: on a GPU the buffer is device memory. */
  zrt_copy(ctx, lossBuf, loss, sizeof(float));
  sampleUpdate(ctx, args, &kState, grad);
  void *scratch[] = {e, p, h, logits, dlogits, lossBuf, one};
  for (size_t i = 0; i < sizeof(scratch) / sizeof(scratch[0]); ++i)
    zrt_free(ctx, scratch[i]);
}
