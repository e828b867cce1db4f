//===- kernels.h - The CPU backend's kernels --------------------*- C++ -*-===//
//
// One function per kernel of the catalogue (zero/zrt_kernels.def), declared
// from its line, with the same arguments and the same contract (read the
// comment above that line). The zrt_* entry points (abi/kernels.cpp) reach
// them through the table of kernels_table.cpp on every context on the CPU,
// after the kernel's TraceScope: a kernel here neither traces nor
// dispatches.
//
// Kernels run to completion on the calling thread. Shape, dtype and data
// errors (a label or token id out of range) stop the job with zrt::fatal().
// Tensors of either dtype are read and written through cpu/dtype.h's
// load/store, computing in float32; GEMMs are OpenBLAS's cblas_sgemm.
//
// Files: one family per file (matmul.cpp, attention.cpp, softmax_xent.cpp,
// layer_norm.cpp, ...); cpu/backend.cpp is the rest of the backend (memory,
// host copies, the collectives' transport).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CPU_KERNELS_H
#define ZRT_CPU_KERNELS_H

#include "core/device.h"
#include "zero/zrt.h"

#include <cstdint>

namespace zrt::cpu {

/// Every kernel below as a DeviceKernels table (kernels_table.cpp): the
/// kernels of every context on the CPU.
const DeviceKernels &cpuKernels();

// One per catalogue line, with the zrt_* function's parameters.
#define ZRT_KERNEL(name, backendName, params, args) void backendName params;
#include "zero/zrt_kernels.def"
#undef ZRT_KERNEL

} // namespace zrt::cpu

#endif // ZRT_CPU_KERNELS_H
