//===- epilogue.h - zrt_matmul_bias's epilogue, every backend ---*- C++ -*-===//
//
// Every backend's matmulBias starts with checkEpilogue, so that all refuse
// a bad epilogue or pre-activation pointer alike, with one message, before
// anything runs (test/runtime/kernel-errors.test). Plain C++ with no CUDA
// header: nvcc's host code includes it too.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_EPILOGUE_H
#define ZRT_CORE_EPILOGUE_H

#include "core/check.h"
#include "zero/zrt.h"

#include <cstdint>

namespace zrt {

/// Stops the job unless `epilogue` is a zrt_epilogue and `preActivation`
/// is given exactly for ZRT_EPILOGUE_BIAS_GELU.
inline void checkEpilogue(int32_t epilogue, const void *preActivation) {
  if (epilogue != ZRT_EPILOGUE_BIAS && epilogue != ZRT_EPILOGUE_BIAS_GELU)
    fatal("zrt_matmul_bias: unknown epilogue %d", (int)epilogue);
  if ((epilogue == ZRT_EPILOGUE_BIAS_GELU) != (preActivation != nullptr))
    fatal("zrt_matmul_bias: pre_activation must be given exactly for "
          "ZRT_EPILOGUE_BIAS_GELU (epilogue %d, pre_activation %s)",
          (int)epilogue, preActivation ? "given" : "null");
}

} // namespace zrt

#endif // ZRT_CORE_EPILOGUE_H
