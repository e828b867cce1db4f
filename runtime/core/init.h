//===- init.h - Parameter initialisation ------------------------*- C++ -*-===//
#ifndef ZRT_CORE_INIT_H
#define ZRT_CORE_INIT_H

#include <cstdint>

namespace zrt {

/// Fills elements [first, first + count) of the full tensor named `name`
/// (numel elements) into `out`; elements at or past numel are the shard's
/// zero padding. `init` and `scale` are a zrt_init and its scale (ONES
/// ignores the scale). Values are float32; a bf16 parameter is their
/// rounding, so it equals the rounded float32 master of the same name.
void initParamSlice(const char *name, int32_t init, float scale, uint64_t seed,
                    int64_t numel, int64_t first, int64_t count, float *out);

} // namespace zrt

#endif // ZRT_CORE_INIT_H
