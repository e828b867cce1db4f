//===- device_error.cpp - Reporting the data errors kernels record --------===//
//
// Compiled into libzrt's CUDA backend and into the emulated device of
// runtime/cuda/tests/emulation alike, so both stop with the same words.
//
//===----------------------------------------------------------------------===//

#include "cuda/device_error.cuh"

#include "core/check.h"

namespace zrt::cuda {

void stopOnDeviceError(const DeviceError &error) {
  // The forward kernel of each pair sees a bad value first (the slot keeps
  // the first error), so it is the one named, with the CPU backend's words.
  switch (error.code) {
  case kNoDeviceError:
    return;
  case kLabelOutOfRange:
    fatal("zrt_softmax_xent: label %lld in row %lld is outside [0, %lld)",
          (long long)error.value, (long long)error.row, (long long)error.bound);
  case kTokenOutOfRange:
    fatal("zrt_embedding: id %lld in row %lld is outside [0, %lld)",
          (long long)error.value, (long long)error.row, (long long)error.bound);
  }
  fatal("a CUDA kernel reported error code %d (row %lld, value %lld, bound "
        "%lld)",
        (int)error.code, (long long)error.row, (long long)error.value,
        (long long)error.bound);
}

} // namespace zrt::cuda
