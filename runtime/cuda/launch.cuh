//===- launch.cuh - Kernel launches, on a GPU or the emulator --*- CUDA -*-===//
//
// Every launch in the .cu files is launchKernel(kernel, grid, block,
// sharedBytes, stream, args...) rather than the <<<...>>> syntax, which only
// nvcc parses: under nvcc it is exactly that launch; with
// ZRT_CUDA_EMULATION, where the .cu files compile as C++ for the host
// emulator of runtime/cuda/tests/emulation, it runs the kernel there (and
// refuses, as a GPU would, a configuration the GPU would refuse). So the
// emulated tests run the launch code itself, grids and scratch included,
// not a copy of it.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_LAUNCH_CUH
#define ZRT_CUDA_LAUNCH_CUH

#ifdef ZRT_CUDA_EMULATION
#include "cuda_runtime_emulation.h"
#else
#include <cuda_runtime.h>
#endif

#include <cstddef>
#include <utility>

namespace zrt::cuda {

/// kernel<<<grid, block, sharedBytes, stream>>>(args...); check the launch
/// with ZRT_CUDA_CHECK_LAUNCH after it, as after <<<>>>.
template <typename... Params, typename... Args>
inline void launchKernel(void (*kernel)(Params...), dim3 grid, dim3 block,
                         size_t sharedBytes, cudaStream_t stream,
                         Args &&...args) {
#ifdef ZRT_CUDA_EMULATION
  (void)stream; // every emulated call runs at once
  emulatedLaunch(kernel, grid, block, sharedBytes, std::forward<Args>(args)...);
#else
  kernel<<<grid, block, sharedBytes, stream>>>(std::forward<Args>(args)...);
#endif
}

} // namespace zrt::cuda

#endif // ZRT_CUDA_LAUNCH_CUH
