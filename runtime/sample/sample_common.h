/*===- sample_common.h - What the hand-written samples share -----*- C -*-===*
 *
 * The parameter, master and moment arguments of a sample program, and the
 * ZeRO update after backward, written against zrt.h the way zero-opt's
 * lowering emits them. Build-time knobs stand in for zero-opt's flags:
 *   SAMPLE_WORLD_SIZE    --world-size (default 1)
 *   SAMPLE_STAGE         --stage: 0 replicates everything, 1 and 2 shard the
 *                        moments (and masters) and reduce-scatter gradients,
 *                        3 also shards the parameters (default 0)
 *   SAMPLE_BF16          bf16 parameters, gradients and activations with
 *                        float32 master weights (default 0: all float32)
 *   SAMPLE_CLIP          declare ZRT_ROLE_MAX_NORM and clip the global
 *                        gradient norm (--clip-grad-norm) (default 0)
 *   SAMPLE_SHARD_GROUP   --shard-group-size: shard over groups of this many
 *                        ranks, replicated across the groups (default 0:
 *                        none, sharded over every rank)
 *   SAMPLE_ABI_VERSION   the ABI version declared (default ZRT_ABI_VERSION)
 *
 *===----------------------------------------------------------------------===*/
#ifndef ZRT_SAMPLE_COMMON_H
#define ZRT_SAMPLE_COMMON_H

#include "zero/zrt.h"

#include <stddef.h>

#ifndef SAMPLE_WORLD_SIZE
#define SAMPLE_WORLD_SIZE 1
#endif
#ifndef SAMPLE_STAGE
#define SAMPLE_STAGE 0
#endif
#ifndef SAMPLE_BF16
#define SAMPLE_BF16 0
#endif
#ifndef SAMPLE_CLIP
#define SAMPLE_CLIP 0
#endif
#ifndef SAMPLE_ABI_VERSION
#define SAMPLE_ABI_VERSION ZRT_ABI_VERSION
#endif
#ifndef SAMPLE_SHARD_GROUP
#define SAMPLE_SHARD_GROUP 0
#endif

enum { W = SAMPLE_WORLD_SIZE };
/* The ranks each sharded tensor is spread over: a shard group, or all. */
enum { G = SAMPLE_SHARD_GROUP ? SAMPLE_SHARD_GROUP : W };
enum { SHARD_STATE = SAMPLE_STAGE >= 1, SHARD_PARAMS = SAMPLE_STAGE == 3 };
/* Storage type of parameters, gradients and activations. */
enum { DT = SAMPLE_BF16 ? ZRT_BF16 : ZRT_F32, DT_BYTES = SAMPLE_BF16 ? 2 : 4 };

struct SampleParam {
  const char *name;
  int32_t rank;
  int64_t dim0, dim1;
  int32_t init;
  float scale;
};

/* A model's parameters and where their arguments start: parameters at
 * first + i, then (bf16) their masters, then the AdamW moments. */
struct SampleState {
  const struct SampleParam *params;
  int count;
  int first;
  int lrArg, stepArg, maxNormArg; /* maxNormArg < 0: no clipping */
};

int64_t sampleNumel(const struct SampleParam *p);
/* ceil(numel / G): the elements of one shard. */
int64_t sampleShard(int64_t numel);
void *sampleAlloc(zrt_context *ctx, int64_t elements, int32_t category);

/* After zrt_declare_program: the shard groups, when SAMPLE_SHARD_GROUP asks
 * for them. */
void sampleDeclareShardGroups(zrt_context *ctx);

/* Declares the parameter, master and moment arguments, then AdamW's four
 * scalar hyperparameters (beta1, beta2, eps, weight decay); returns the
 * index after the last one. */
int sampleDeclareState(zrt_context *ctx, const struct SampleState *s);

/* The full parameter i: the argument itself, or (stage 3) a gathered copy
 * that sampleRelease frees. */
void *sampleGather(zrt_context *ctx, void **args, const struct SampleState *s,
                   int i);
void sampleRelease(zrt_context *ctx, void *full);

/* Sums the full gradients grads[i] (DT, freed here) over ranks (with shard
 * groups: reduce-scattered in the group, then the shard all-reduced across
 * the replicas), clips their global norm when the program declares a
 * threshold, and applies AdamW to what this rank owns. */
void sampleUpdate(zrt_context *ctx, void **args, const struct SampleState *s,
                  void **grads);

#endif /* ZRT_SAMPLE_COMMON_H */
