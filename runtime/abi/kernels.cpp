//===- kernels.cpp - The exported zrt_* kernels ---------------------------===//
//
// Every kernel of the catalogue (zero/zrt_kernels.def), defined from its
// line: the kernel's TraceScope, named as the kernel without `zrt_`, then
// the same call on the table of the context's backend (the CPU's, or a
// device's: core/device.h). One definition for every backend, so the trace
// sees them alike; the table entries are typed as these functions, and the
// call forwards the parameters by the names the line lists.
//
// The cost over calling the backend's kernel directly is one indirect call
// and, without --trace, the test of a null pointer.
//
//===----------------------------------------------------------------------===//

#include "core/context.h"
#include "core/trace.h"

using namespace zrt;

#define ZRT_KERNEL(name, backendName, params, args)                            \
  extern "C" void zrt_##name params {                                          \
    TraceScope trace(ctx, #name);                                              \
    ctx->kernels->name args;                                                   \
  }
#include "zero/zrt_kernels.def"
#undef ZRT_KERNEL
