//===- emulated_device.h - A context whose kernels are emulated -*- C++ -*-===//
//
// The emulated CUDA kernels (emulated_kernels.h) as a device backend of
// core/device.h: attach() gives a CPU context a DeviceKernels table and a
// DeviceRuntime, as cuda::attach does on a GPU, so that the zrt_* entry
// points called on it (through ZRT_ON_DEVICE) run the CUDA kernels on the
// host emulator. That lets the kernel checks the GPU runs
// (cuda/tests/kernel_cases.h) run unchanged on a machine without a GPU, and
// whole compiled programs train on the CUDA kernels there
// (zrt_cuda_emulated_main: --device=cuda-emulated).
//
// The device's memory is host memory, its copies are memcpy, its
// synchronize() reports the data errors the kernels recorded with the CUDA
// runtime's messages (stopOnDeviceError), and its collectives run on the
// CPU backend's transport. What a GPU runs in a library or on the copy
// engine, with no kernel of ours (matmul and matmul_bias: cuBLASLt; copy,
// shard_slice, slice_cols and its gradient), runs as the CPU backend's
// kernel.
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
