//===- backend.h - Attaching a context to a GPU -----------------*- C++ -*-===//
//
// What --device (select.cpp, registered with core/device.h) and the CUDA
// tests call to put a context on a GPU. Deliberately free of CUDA types, so
// that select.cpp, a source of libzrt itself, compiles without the CUDA
// toolkit's headers; the state itself is CudaRuntime (device_context.h).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_BACKEND_H
#define ZRT_CUDA_BACKEND_H

#include "zero/zrt.h"

#include <string>

/// The CUDA backend's objects are compiled with hidden visibility: libzrt
/// exports, of its zrt::cuda namespace, only what is marked with this (the
/// core's and the GPU tests' entry points), so that a program linking
/// another build of the kernels (the emulated device of
/// runtime/cuda/tests/emulation) keeps its own apart from libzrt's.
#define ZRT_CUDA_API __attribute__((visibility("default")))

namespace zrt::cuda {

/// GPUs this process can use; 0, with `why` set to the CUDA runtime's
/// reason, when there are none (no driver, no device).
ZRT_CUDA_API int visibleGpus(std::string &why);

/// "NVIDIA H200": the name the driver gives GPU `gpu`.
ZRT_CUDA_API std::string gpuName(int gpu);

/// Puts `ctx` on GPU `gpu`: its kernels, memory and collectives from now on
/// run there (zrt_context::kernels and runtime). `ctx` must be on the CPU
/// and not hold any allocation yet (checkAttachable in core/device.h). Collective over ctx's communicator when it has one:
/// every rank calls it, and NCCL is set up over the same ranks (rank 0 makes
/// the unique id, MPI broadcasts it). A context without MPI (tests) gets no
/// NCCL communicator; its collectives are local copies, as on the CPU.
ZRT_CUDA_API void attach(zrt_context *ctx, int gpu);

} // namespace zrt::cuda

#endif // ZRT_CUDA_BACKEND_H
