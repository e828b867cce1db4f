// Stand-in for <cuda_bf16.h> in the host emulator: cuda_runtime_emulation.h.
#include "cuda_runtime_emulation.h"
