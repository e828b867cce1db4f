//===- emulated_device.h - A context whose kernels are emulated -*- C++ -*-===//
//
// The emulated CUDA kernels (emulated_kernels.h) as a device backend of
// core/device.h: attach() gives a CPU context a DeviceKernels table and a
// DeviceRuntime, as cuda::attach does on a GPU, so that the zrt_* entry
// points called on it (through ZRT_ON_DEVICE) run the CUDA kernels on the
// host emulator. That lets the kernel checks the GPU runs
// (cuda/tests/kernel_cases.h) run unchanged on a machine without a GPU.
//
// The device's memory is host memory, its copies are memcpy, and its
// synchronize() reports the data errors the kernels recorded with the CUDA
// runtime's messages (stopOnDeviceError). What the emulator does not run
// stops the job naming the kernel: matmul and matmul_bias (cuBLASLt), the
// copy-engine kernels (copy, shard_slice, slice_cols and its gradient) and
// the collectives (NCCL).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_TESTS_EMULATION_EMULATED_DEVICE_H
#define ZRT_CUDA_TESTS_EMULATION_EMULATED_DEVICE_H

#include "zero/zrt.h"

namespace zrt::cuda::emulated {

/// Puts `ctx`, a CPU context that holds no buffer yet, on the emulated
/// device.
void attach(zrt_context *ctx);

} // namespace zrt::cuda::emulated

#endif // ZRT_CUDA_TESTS_EMULATION_EMULATED_DEVICE_H
