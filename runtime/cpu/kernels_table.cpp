//===- kernels_table.cpp - The CPU backend's DeviceKernels table ----------===//
//
// The zrt_* entry points (abi/kernels.cpp) call these on a CPU context. The
// CPU kernels (kernels.h) take the zrt_* arguments in the same order, so the
// table holds them directly, one per line of the kernel catalogue
// (zero/zrt_kernels.def): each entry is typed as the zrt_* function it
// stands for, and kernels.h declares each CPU kernel from the same line, so
// a signature cannot drift and a kernel missing does not link.
//
//===----------------------------------------------------------------------===//

#include "cpu/kernels.h"

namespace zrt::cpu {

static DeviceKernels makeTable() {
  DeviceKernels kernels{};
#define ZRT_KERNEL(name, backendName, params, args)                            \
  kernels.name = cpu::backendName;
#include "zero/zrt_kernels.def"
#undef ZRT_KERNEL
  return kernels;
}

const DeviceKernels &cpuKernels() {
  static const DeviceKernels table = makeTable();
  return table;
}

} // namespace zrt::cpu
