//===- init.h - Parameter initialisation ------------------------*- C++ -*-===//
#ifndef ZRT_CORE_INIT_H
#define ZRT_CORE_INIT_H

#include <cstdint>

namespace zrt {

/// Fills elements [first, first + count) of the full tensor named `name`
/// (numel elements) into `out`; elements at or past numel are the shard's
/// zero padding. `init` and `scale` are a zrt_init and its scale.
void initParamSlice(const char *name, int32_t init, float scale, uint64_t seed,
                    int64_t numel, int64_t first, int64_t count, float *out);

} // namespace zrt

#endif // ZRT_CORE_INIT_H
