//===- init.cpp - Parameter initialisation --------------------------------===//
//
// Keyed on (seed, FNV-1a of the name, flat index): the value of an element
// depends neither on the world size nor on which rank makes it, so a stage-3
// shard holds exactly the elements of the full tensor a single rank makes.
//
//===----------------------------------------------------------------------===//

#include "core/init.h"
#include "core/check.h"
#include "core/rng.h"

#include "zero/zrt.h"

namespace zrt {

static float initValue(int32_t init, float scale, uint64_t seed, uint64_t id,
                       int64_t index) {
  switch (init) {
  case ZRT_INIT_ZEROS:
    return 0.0f;
  case ZRT_INIT_UNIFORM:
    return (float)((2.0 * uniformAt(seed, StreamParamInit, id, index) - 1.0) *
                   scale);
  case ZRT_INIT_NORMAL:
    return (float)(normalAt(seed, StreamParamInit, id, index) * scale);
  case ZRT_INIT_ONES:
    return 1.0f;
  }
  fatal("unknown parameter init %d", init);
}

void initParamSlice(const char *name, int32_t init, float scale, uint64_t seed,
                    int64_t numel, int64_t first, int64_t count, float *out) {
  uint64_t id = fnv1a(name);
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = first + i;
    out[i] = index < numel ? initValue(init, scale, seed, id, index) : 0.0f;
  }
}

} // namespace zrt
