//===- cuda_emulation.h - CUDA's execution model on the host, for tests ---===//
//
// Enough of CUDA to compile the tensor-core attention kernels
// (cuda/attention_tc_kernels.cuh) as ordinary C++ and run them on a machine
// without a GPU: threadIdx / blockIdx / blockDim / gridDim, dynamic shared
// memory, __syncthreads, __syncwarp, __shfl_xor_sync, and mma.cuh's
// primitives (mma.m16n8k16 bf16, ldmatrix x4 with and without .trans, bf16
// packing) with the fragment layouts of the PTX ISA.
//
// Every CUDA thread of a block is a fiber (ucontext) on one OS thread, run
// round-robin in thread order; a thread that reaches __syncthreads or a
// warp-collective operation waits there (yields) until every thread of its
// block or warp has arrived, so warp-synchronous code runs as on a GPU and
// the schedule, hence every result, is deterministic. A warp collective
// posts this lane's operands into the warp's exchange slots, waits for the
// warp, then computes this lane's result from every lane's operands; the
// slots alternate between two sets so a fast lane cannot overwrite operands
// a slow one still reads. Blocks are independent and spread over a few OS
// threads (each with its own fibers).
//
// Checks a GPU would not make but a bug would need: every lane of a warp
// must reach the same collective with the same operation (divergent
// collectives stop the run), barriers that can never complete are reported
// as a deadlock, ldmatrix row addresses must be 16-byte aligned and inside
// the block's shared memory, and shared memory starts filled with 0xff
// bytes (NaN in bf16 and float32), so reading what no thread wrote shows.
//
// emu::fault (set by the test's --fault=) breaks one primitive on purpose,
// to show that the tests notice a wrong fragment layout.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_TESTS_EMULATION_CUDA_EMULATION_H
#define ZRT_CUDA_TESTS_EMULATION_CUDA_EMULATION_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

//===--- Keywords and types -----------------------------------------------===//

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};

struct alignas(16) uint4 {
  unsigned x, y, z, w;
};

/// bf16 in memory: the upper half of a float32. Kernels only move its bits.
struct __nv_bfloat16 {
  uint16_t bits;
};

namespace emu {

//===--- The execution model ----------------------------------------------===//

/// What the running fiber sees (thread-local: each OS thread runs its own
/// blocks).
const dim3 &threadIndex();
const dim3 &blockIndex();
const dim3 &blockDimension();
const dim3 &gridDimension();

/// Waits until every thread of the block has arrived.
void syncThreads();
/// Posts `bytes` bytes for this lane under the operation name `op`, waits for
/// the whole warp, and returns the warp's 32 posts (kSlotBytes apart).
constexpr size_t kSlotBytes = 64;
const unsigned char *warpExchange(const char *op, const void *data,
                                  size_t bytes);
int laneId();

/// The running block's dynamic shared memory and its size.
unsigned char *sharedMemory();
size_t sharedMemoryBytes();

/// Runs body() once per thread of every block of the grid; blocks go to
/// `workers` OS threads. Stops the process on a deadlock or a divergent
/// collective (fail).
void launch(dim3 grid, dim3 block, size_t sharedBytes,
            const std::function<void()> &body, int workers);

/// Prints the message and exits with status 1.
[[noreturn]] void fail(const char *format, ...);

/// A deliberately broken primitive, for the test of the tests: "" (none),
/// "mma-b-layout" (B fragment read with its k pairs swapped) or
/// "ldmatrix-trans" (.trans ignored).
extern std::string fault;

//===--- bf16 -------------------------------------------------------------===//

inline float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint32_t floatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}
/// Round to nearest even (the inputs of these tests are never NaN).
inline uint16_t roundToBf16(float f) {
  uint32_t bits = floatToBits(f);
  return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
inline float bf16ToFloat(uint16_t bits) {
  return bitsToFloat((uint32_t)bits << 16);
}

} // namespace emu

#define threadIdx (::emu::threadIndex())
#define blockIdx (::emu::blockIndex())
#define blockDim (::emu::blockDimension())
#define gridDim (::emu::gridDimension())

inline void __syncthreads() { emu::syncThreads(); }
inline void __syncwarp(unsigned = 0xffffffffu) {
  emu::warpExchange("__syncwarp", nullptr, 0);
}
inline float __shfl_xor_sync(unsigned, float x, int laneMask) {
  const unsigned char *slots = emu::warpExchange("shfl.xor", &x, sizeof(x));
  float y;
  std::memcpy(&y, slots + (size_t)(emu::laneId() ^ laneMask) * emu::kSlotBytes,
              sizeof(y));
  return y;
}

//===--- mma.cuh's primitives ---------------------------------------------===//

namespace zrt::cuda::tc {

using Bf16 = __nv_bfloat16;

/// D = A B + D with the m16n8k16 fragment layouts of the PTX ISA (see
/// mma.cuh). The 16 products are exact in float32 (8-bit significands); they
/// are summed in double and added to C with one rounding.
void mmaBf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);

/// ldmatrix.sync.aligned.m8n8.x4(.trans).shared.b16 (see mma.cuh).
void ldmatrixX4(uint32_t (&r)[4], const Bf16 *row);
void ldmatrixX4Trans(uint32_t (&r)[4], const Bf16 *row);

inline uint32_t packBf16x2(float lo, float hi) {
  return (uint32_t)emu::roundToBf16(lo) | (uint32_t)emu::roundToBf16(hi) << 16;
}
inline float lowBf16(uint32_t pair) { return emu::bitsToFloat(pair << 16); }
inline float highBf16(uint32_t pair) {
  return emu::bitsToFloat(pair & 0xffff0000u);
}

inline float shflXor(float x, int laneMask) {
  return __shfl_xor_sync(0xffffffffu, x, laneMask);
}

template <typename T> inline T *dynamicSmem() {
  return reinterpret_cast<T *>(emu::sharedMemory());
}

} // namespace zrt::cuda::tc

#endif // ZRT_CUDA_TESTS_EMULATION_CUDA_EMULATION_H
