//===- emulated_device.h - A context whose kernels are emulated -*- C++ -*-===//
//
// The CUDA backend's kernels on the host emulator, as a device backend of
// core/device.h. The .cu files themselves, launch code included, compile as
// C++ for the emulator (cuda/launch.cuh; the CUDA runtime API over host
// memory: cuda_runtime_emulation.h); attach() gives a CPU context a
// DeviceKernels table of their functions and a DeviceRuntime, as
// cuda::attach does on a GPU, so the zrt_* entry points called on it
// (abi/kernels.cpp calls the context's table) run the CUDA kernels on the
// emulator. That lets
// the kernel checks the GPU runs (cuda/tests/kernel_cases.h) run unchanged
// on a machine without a GPU, and whole compiled programs train on the CUDA
// kernels there (emulated_main.cpp: --device=cuda-emulated).
//
// The device's memory is host memory, its copies are memcpy, its
// synchronize() reports the data errors the kernels recorded with the CUDA
// runtime's messages (stopOnDeviceError), and its collectives run on the
// CPU backend's transport (cpu/mpi_transport.h). It does not call itself
// hostAddressable(), so the core takes a GPU's paths on it (host copies,
// the loss slot, zrt_fill for arena buffers). The offload's ordered copies
// (core/device.h) arrive as late as a GPU may let them: a copy to the host
// when a fence after it is waited for, an upload when the device is
// ordered after it, so a missing wait shows in the losses. matmul.cu's cuBLASLt calls go
// to an emulation of cuBLASLt's documented semantics
// (cublaslt_emulation.cpp).
//
// These functions live in namespace zrt::cuda like the ones libzrt's CUDA
// backend exports (backend.h); libzrt hides the rest of its CUDA build, so
// this build of the kernels stays apart from it.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_TESTS_EMULATION_EMULATED_DEVICE_H
#define ZRT_CUDA_TESTS_EMULATION_EMULATED_DEVICE_H

#include "cuda/device_error.cuh"
#include "zero/zrt.h"

#include <string>

namespace zrt::cuda::emulated {

/// Puts `ctx`, a CPU context that holds no buffer yet, on the emulated
/// device.
void attach(zrt_context *ctx);

/// OS threads the emulator spreads a launch's blocks over.
void setWorkers(int workers);
/// emu::fault (cuda_emulation.h): a primitive broken on purpose.
void setFault(const std::string &fault);

/// The data error the kernels of `ctx` recorded (code 0: none), cleared, so
/// that the next synchronisation does not stop on it.
DeviceError takeRecordedError(zrt_context *ctx);

} // namespace zrt::cuda::emulated

#endif // ZRT_CUDA_TESTS_EMULATION_EMULATED_DEVICE_H
