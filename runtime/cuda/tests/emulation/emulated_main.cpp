//===- emulated_main.cpp - main() of a program on the emulated device -----===//
//
// driver/main.c with one more device: linked with a compiled program's object
// file (zero-opt --emit=obj) and libzrt into libzrt_cuda_emulated_main.a's
// executable, the program also runs with --device=cuda-emulated, where every
// hand-written CUDA kernel runs on the host emulator (emulated_device.h).
// Slow (each CUDA thread is a fiber), so for small models: it shows that a
// real program's calls, composed step after step, give the CPU backend's
// losses on the CUDA kernels, before a GPU is at hand
// (test/runtime/cuda-emulated-training.test).
//
//===----------------------------------------------------------------------===//

#include "emulated_device.h"

#include "core/device.h"
#include "driver/driver.h"

#include <cstdlib>
#include <string>

extern "C" void zero_program_apply(zrt_context *ctx, void **args)
    __attribute__((weak));
extern "C" void zero_program_eval(zrt_context *ctx, void **args, void *loss)
    __attribute__((weak));

/// --device=cuda-emulated (core/device.h's Backend::select): every rank has
/// the emulator, linked into the executable.
static std::string selectEmulated(zrt_context *ctx, bool,
                                  std::string &banner) {
  zrt::cuda::emulated::attach(ctx);
  banner = "device: cuda-emulated";
  return "";
}

int main(int argc, char **argv) {
  zrt::cuda::emulated::setWorkers(2);
  // The test of the test: a primitive broken on purpose (cuda_emulation.h's
  // emu::fault), which must show in the losses.
  if (const char *fault = std::getenv("ZRT_CUDA_EMULATION_FAULT"))
    zrt::cuda::emulated::setFault(fault);
  zrt::registerBackend({"cuda-emulated", selectEmulated});
  return zrt_run(argc, argv, zero_program_describe, zero_program_step,
                 zero_program_apply, zero_program_eval);
}
