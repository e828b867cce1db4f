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
// The runtime looks at the result of one kernel: zrt_clip_coefficient's
// input is the step's all-reduced squared gradient norm, which it copies
// (on the backend, asynchronously) into the step scalars for the driver's
// non-finite check and progress line (driver/driver.cpp).
//
//===----------------------------------------------------------------------===//

#include "core/context.h"
#include "core/device.h"
#include "core/schedule_check.h"
#include "core/trace.h"

using namespace zrt;

namespace {
enum class Kernel {
#define ZRT_KERNEL(name, backendName, params, args) name,
#include "zero/zrt_kernels.def"
#undef ZRT_KERNEL
};

/// What the runtime does after a kernel has been queued: nothing, but for
/// the kernels it observes.
template <Kernel> struct After {
  template <typename... Args> static void run(Args...) {}
};
template <> struct After<Kernel::clip_coefficient> {
  static void run(zrt_context *ctx, const float *total_sq, const float *,
                  float *) {
    float *slot = ctx->runtime->stepScalars() + DeviceRuntime::kGradNormSquared;
    ctx->kernels->copy(ctx, total_sq, slot, sizeof(float));
    ctx->gradNormRecorded = true;
  }
};
/// The FLOPs of a GEMM kernel's call (0 for the other kernels), which
/// --calibrate adds up with the kernels' time: zrt.h's formula, which the
/// compiler's time model counts too.
template <Kernel> struct GemmFlops {
  template <typename... Args> static double of(Args...) { return 0; }
};
template <> struct GemmFlops<Kernel::matmul> {
  static double of(zrt_context *, int32_t, const void *, const void *, void *,
                   int64_t m, int64_t n, int64_t k, int32_t, int32_t) {
    return double(zrt_matmul_flops(m, n, k));
  }
};
template <> struct GemmFlops<Kernel::matmul_bias> {
  static double of(zrt_context *, int32_t, const void *, const void *,
                   const void *, void *, void *, int64_t m, int64_t n,
                   int64_t k, int32_t, int32_t, int32_t) {
    return double(zrt_matmul_flops(m, n, k));
  }
};

/// Times one kernel while ctx->timing is on (the CPU backend, whose kernels
/// have finished when they return); only the outermost call counts.
class KernelTimer {
public:
  KernelTimer(zrt_context *ctx, double flops)
      : ctx(ctx->timing.on ? ctx : nullptr), flops(flops) {
    if (!this->ctx)
      return;
    outer = ctx->timing.depth++ == 0;
    if (outer)
      begin = ScheduleCheck::nowNs();
  }
  ~KernelTimer() {
    if (!ctx)
      return;
    --ctx->timing.depth;
    if (!outer)
      return;
    int64_t ns = ScheduleCheck::nowNs() - begin;
    ++ctx->timing.kernels;
    ctx->timing.kernelNs += ns;
    if (flops > 0) {
      ctx->timing.gemmFlops += flops;
      ctx->timing.gemmNs += ns;
    }
  }

private:
  zrt_context *ctx;
  double flops;
  bool outer = false;
  int64_t begin = 0;
};
} // namespace

#define ZRT_KERNEL(name, backendName, params, args)                            \
  extern "C" void zrt_##name params {                                          \
    TraceScope trace(ctx, #name);                                              \
    KernelTimer timer(ctx, GemmFlops<Kernel::name>::of args);                  \
    ctx->kernels->name args;                                                   \
    After<Kernel::name>::run args;                                             \
  }
#include "zero/zrt_kernels.def"
#undef ZRT_KERNEL
