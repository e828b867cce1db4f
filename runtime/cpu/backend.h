//===- backend.h - Putting a context on the CPU -----------------*- C++ -*-===//
//
// The CPU backend as the core sees it: every context starts on it
// (core/context.cpp), and --device=cpu keeps it there. Its kernels are
// kernels.h's, its memory is host memory, and its collectives run over MPI
// on the context's communication thread (mpi_transport.h).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CPU_BACKEND_H
#define ZRT_CPU_BACKEND_H

#include "zero/zrt.h"

namespace zrt::cpu {

/// Gives `ctx`, a context being created, the CPU's kernels and runtime
/// (zrt_context::kernels and runtime). Its communication queue must exist.
void attach(zrt_context *ctx);

} // namespace zrt::cpu

#endif // ZRT_CPU_BACKEND_H
