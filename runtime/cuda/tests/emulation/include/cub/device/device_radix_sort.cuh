// Stand-in for CUB's radix sort in the host emulator:
// cuda_runtime_emulation.h.
#include "cuda_runtime_emulation.h"
