//===- device_error.cuh - Data errors recorded by kernels ------*- CUDA -*-===//
//
// What a kernel found wrong with its data (a label or token id out of
// range): recorded on the device with reportDeviceError, read back and
// reported by checkDeviceErrors (kernels.h) through stopOnDeviceError. The
// struct is plain C++ for the host code; reportDeviceError is device code,
// compiled under nvcc and under the host emulator of
// runtime/cuda/tests/emulation (ZRT_CUDA_EMULATION).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_DEVICE_ERROR_CUH
#define ZRT_CUDA_DEVICE_ERROR_CUH

#ifdef ZRT_CUDA_EMULATION
#include "cuda_emulation.h"
#endif

#include <cstdint>

namespace zrt::cuda {

/// What a kernel found wrong with its data. Written once (the first error
/// wins) into device memory owned by the context.
struct DeviceError {
  int32_t code;  // 0: none; else one of DeviceErrorCode
  int64_t row;   // the row (or element) where it was found
  int64_t value; // the offending value (the label or id)
  int64_t bound; // the bound it broke (cols or vocab)
};
enum DeviceErrorCode : int32_t {
  kNoDeviceError = 0,
  kLabelOutOfRange = 1, // softmax_xent(_grad): label not in [0, cols)
  kTokenOutOfRange = 2  // embedding(_grad): id not in [0, vocab)
};

/// Host code: returns when `error` records nothing, else stops the job
/// naming the kernel, the row and the value in the CPU backend's words (the
/// CUDA runtime's synchronisation, and the emulated device's).
void stopOnDeviceError(const DeviceError &error);

#if defined(__CUDACC__) || defined(ZRT_CUDA_EMULATION)
/// Records an error from device code; the first one is kept.
__device__ inline void reportDeviceError(DeviceError *slot, int32_t code,
                                         int64_t row, int64_t value,
                                         int64_t bound) {
  if (atomicCAS(reinterpret_cast<int *>(&slot->code), 0, code) == 0) {
    slot->row = row;
    slot->value = value;
    slot->bound = bound;
  }
}
#endif

} // namespace zrt::cuda

#endif // ZRT_CUDA_DEVICE_ERROR_CUH
