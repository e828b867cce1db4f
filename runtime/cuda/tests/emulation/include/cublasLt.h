// Stand-in for <cublasLt.h> in the host emulator: cuda_runtime_emulation.h.
#include "cuda_runtime_emulation.h"
