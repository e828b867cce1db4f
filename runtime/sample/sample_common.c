/*===- sample_common.c - What the hand-written samples share -------------===*/

#include "sample_common.h"

#include <stdio.h>

enum { MAX_PARAMS = 16 };

int64_t sampleNumel(const struct SampleParam *p) {
  return p->rank == 1 ? p->dim0 : p->dim0 * p->dim1;
}

int64_t sampleShard(int64_t numel) { return (numel + G - 1) / G; }

void sampleDeclareShardGroups(zrt_context *ctx) {
  if (SAMPLE_SHARD_GROUP)
    zrt_declare_shard_groups(ctx, SAMPLE_SHARD_GROUP);
}

void *sampleAlloc(zrt_context *ctx, int64_t elements, int32_t category) {
  return zrt_alloc(ctx, elements * DT_BYTES, category);
}

static int masterArg(const struct SampleState *s, int i) {
  return s->first + s->count + i;
}
static int momentArg(const struct SampleState *s, int i, int which) {
  return s->first + (SAMPLE_BF16 ? 2 : 1) * s->count + which * s->count + i;
}

/* AdamW's beta1, beta2, eps and weight decay: scalars after the moments. */
enum { NUM_ADAMW_HYPER = 4 };
static int adamwHyperArg(const struct SampleState *s, int which) {
  return momentArg(s, s->count - 1, 1) + 1 + which;
}

int sampleDeclareState(zrt_context *ctx, const struct SampleState *s) {
  static const char *const hyperNames[NUM_ADAMW_HYPER] = {
      "beta1", "beta2", "eps", "weight_decay"};
  static const int32_t hyperRoles[NUM_ADAMW_HYPER] = {
      ZRT_ROLE_BETA1, ZRT_ROLE_BETA2, ZRT_ROLE_EPS, ZRT_ROLE_WEIGHT_DECAY};
  char name[128];
  for (int i = 0; i < s->count; ++i) {
    const struct SampleParam *p = &s->params[i];
    int64_t d1 = p->rank == 2 ? p->dim1 : 0;
    zrt_declare_arg(ctx, s->first + i, p->name, ZRT_ROLE_PARAM, DT, p->rank,
                    p->dim0, d1, 0, 0, SHARD_PARAMS, p->init, p->scale);
    if (SAMPLE_BF16)
      zrt_declare_arg(ctx, masterArg(s, i), p->name, ZRT_ROLE_MASTER, ZRT_F32,
                      p->rank, p->dim0, d1, 0, 0, SHARD_STATE, p->init,
                      p->scale);
    snprintf(name, sizeof(name), "%s.adam_m", p->name);
    zrt_declare_arg(ctx, momentArg(s, i, 0), name, ZRT_ROLE_ADAM_M, ZRT_F32,
                    p->rank, p->dim0, d1, 0, 0, SHARD_STATE, 0, 0.0f);
    snprintf(name, sizeof(name), "%s.adam_v", p->name);
    zrt_declare_arg(ctx, momentArg(s, i, 1), name, ZRT_ROLE_ADAM_V, ZRT_F32,
                    p->rank, p->dim0, d1, 0, 0, SHARD_STATE, 0, 0.0f);
  }
  for (int k = 0; k < NUM_ADAMW_HYPER; ++k)
    zrt_declare_arg(ctx, adamwHyperArg(s, k), hyperNames[k], hyperRoles[k],
                    ZRT_F32, 0, 0, 0, 0, 0, 0, 0, 0.0f);
  return adamwHyperArg(s, NUM_ADAMW_HYPER - 1) + 1;
}

void *sampleGather(zrt_context *ctx, void **args, const struct SampleState *s,
                   int i) {
  if (!SHARD_PARAMS)
    return args[s->first + i];
  int64_t n = sampleNumel(&s->params[i]);
  void *full = sampleAlloc(ctx, n, ZRT_MEM_COMM);
  zrt_all_gather(ctx, ZRT_GROUP_SHARD, DT, args[s->first + i], full, n,
                 sampleShard(n), s->params[i].name);
  return full;
}

void sampleRelease(zrt_context *ctx, void *full) {
  if (SHARD_PARAMS)
    zrt_free(ctx, full);
}

/* The global squared norm of the reduced gradients -> clip coefficient. */
static void clipCoefficient(zrt_context *ctx, const struct SampleState *s,
                            void **reduced, const int64_t *counts,
                            float *scalars) {
  /* Kernels only: on a GPU these scalars are device memory. */
  float *sq = &scalars[0], *total = &scalars[1];
  zrt_fill(ctx, ZRT_F32, total, 1, 0.0f);
  for (int i = 0; i < s->count; ++i) {
    zrt_sum_squares(ctx, DT, reduced[i], sq, counts[i]);
    zrt_add(ctx, ZRT_F32, total, sq, total, 1);
  }
  /* A shard group's shards are disjoint (their padding is zero): sum them
   * over the group (its replicas hold the same ones). */
  if (SHARD_STATE)
    zrt_all_reduce(ctx, ZRT_GROUP_SHARD, ZRT_F32, total, total, 1,
                   "gradient norm");
}

/* AdamW on what this rank owns, then the parameter argument brought up to
 * date from the updated float32 values. */
static void applyAdamW(zrt_context *ctx, void **args,
                       const struct SampleState *s, int i, void *grad,
                       const float *scale) {
  int64_t n = sampleNumel(&s->params[i]), sh = sampleShard(n);
  int64_t count = SHARD_STATE ? sh : n;
  void *param = args[s->first + i];
  float *m = args[momentArg(s, i, 0)], *v = args[momentArg(s, i, 1)];
  const float *lr = args[s->lrArg], *t = args[s->stepArg];
  const float *b1 = args[adamwHyperArg(s, 0)], *b2 = args[adamwHyperArg(s, 1)];
  const float *eps = args[adamwHyperArg(s, 2)], *wd = args[adamwHyperArg(s, 3)];
  float *p = SAMPLE_BF16 ? (float *)args[masterArg(s, i)] : NULL;
  float *slice = NULL;
  if (!p && SHARD_STATE && !SHARD_PARAMS) {
    /* Stages 1-2 in float32 keep the full parameter: update this rank's
     * slice of it and gather the slices back. */
    slice = zrt_alloc(ctx, sh * 4, ZRT_MEM_PARAM);
    zrt_shard_slice(ctx, ZRT_F32, param, slice, n, sh);
    p = slice;
  } else if (!p) {
    p = param;
  }
  zrt_adamw(ctx, DT, p, grad, m, v, p, m, v, count, lr, t, scale, b1, b2, eps,
            wd);
  if (slice) {
    zrt_all_gather(ctx, ZRT_GROUP_SHARD, ZRT_F32, slice, param, n, sh,
                   s->params[i].name);
    zrt_free(ctx, slice);
  } else if (SAMPLE_BF16 && SHARD_STATE && !SHARD_PARAMS) {
    void *rounded = sampleAlloc(ctx, sh, ZRT_MEM_PARAM);
    zrt_cast(ctx, ZRT_F32, ZRT_BF16, p, rounded, sh);
    zrt_all_gather(ctx, ZRT_GROUP_SHARD, ZRT_BF16, rounded, param, n, sh,
                   s->params[i].name);
    zrt_free(ctx, rounded);
  } else if (SAMPLE_BF16) {
    zrt_cast(ctx, ZRT_F32, ZRT_BF16, p, param, count);
  }
}

/* Starts every gradient reduction at once; each parameter's update then
 * waits only for its own, so AdamW on parameter i overlaps the reductions
 * of the parameters after it (as zero-opt's scheduled lowering does).
 * With shard groups each reduce-scatter, once waited for, is followed by
 * the all-reduce of its shard across the replicas, started at once.
 * Clipping needs every reduced gradient before the first update. */
void sampleUpdate(zrt_context *ctx, void **args, const struct SampleState *s,
                  void **grads) {
  void *reduced[MAX_PARAMS];
  int64_t counts[MAX_PARAMS], handles[MAX_PARAMS];
  for (int i = 0; i < s->count; ++i) {
    int64_t n = sampleNumel(&s->params[i]);
    if (!SHARD_STATE) {
      handles[i] = zrt_all_reduce_start(ctx, ZRT_GROUP_WORLD, DT, grads[i],
                                        grads[i], n, s->params[i].name);
      reduced[i] = grads[i];
      counts[i] = n;
      continue;
    }
    counts[i] = sampleShard(n);
    reduced[i] = sampleAlloc(ctx, counts[i], ZRT_MEM_GRAD);
    handles[i] =
        zrt_reduce_scatter_start(ctx, ZRT_GROUP_SHARD, DT, grads[i], reduced[i],
                                 n, counts[i], s->params[i].name);
  }
  if (SHARD_STATE && SAMPLE_SHARD_GROUP)
    for (int i = 0; i < s->count; ++i) {
      zrt_wait(ctx, handles[i]);
      handles[i] =
          zrt_all_reduce_start(ctx, ZRT_GROUP_REPLICA, DT, reduced[i],
                               reduced[i], counts[i], s->params[i].name);
    }
  float *scalars = zrt_alloc(ctx, 3 * sizeof(float), ZRT_MEM_ACTIVATION);
  const float *scale = NULL;
  int waited = 0;
  if (s->maxNormArg >= 0) {
    for (; waited < s->count; ++waited)
      zrt_wait(ctx, handles[waited]);
    clipCoefficient(ctx, s, reduced, counts, scalars);
    zrt_clip_coefficient(ctx, &scalars[1], args[s->maxNormArg], &scalars[2]);
    scale = &scalars[2];
  }
  for (int i = 0; i < s->count; ++i) {
    if (i >= waited)
      zrt_wait(ctx, handles[i]);
    if (SHARD_STATE)
      zrt_free(ctx, grads[i]);
    applyAdamW(ctx, args, s, i, reduced[i], scale);
    zrt_free(ctx, reduced[i]);
  }
  zrt_free(ctx, scalars);
}
