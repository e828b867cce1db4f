//===- kernels_table.cpp - The CUDA backend's DeviceKernels table ---------===//
//
// The zrt_* entry points (abi/kernels.cpp) call these on a GPU context.
// The CUDA kernels (kernels.h) take the zrt_* arguments in the same order,
// so the table holds them directly, one per line of the kernel catalogue
// (zero/zrt_kernels.def): each entry is typed as the zrt_* function it
// stands for, and kernels.h declares each CUDA kernel from the same line, so
// a signature cannot drift and a kernel missing does not link. The emulated
// device (tests/emulation/emulated_device.h) uses the same table.
//
//===----------------------------------------------------------------------===//

#include "cuda/kernels.h"

namespace zrt::cuda {

/// Every catalogue entry (zero/zrt_kernels.def) filled with its kernel,
/// declared from the same line (kernels.h): a kernel missing does not link.
static DeviceKernels makeTable() {
  DeviceKernels kernels{};
#define ZRT_KERNEL(name, backendName, params, args)                            \
  kernels.name = cuda::backendName;
#include "zero/zrt_kernels.def"
#undef ZRT_KERNEL
  return kernels;
}

const DeviceKernels &cudaKernels() {
  static const DeviceKernels table = makeTable();
  return table;
}

} // namespace zrt::cuda
