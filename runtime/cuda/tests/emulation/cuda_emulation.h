//===- cuda_emulation.h - CUDA's execution model on the host, for tests ---===//
//
// Enough of CUDA to compile the backend's hand-written kernels (the
// tensor-core attention of cuda/attention_tc_kernels.cuh and the SIMT
// kernels of cuda/*_kernels.cuh) as ordinary C++ and run them on a machine
// without a GPU: threadIdx / blockIdx / blockDim / gridDim, static and
// dynamic shared memory, __syncthreads, __syncwarp, the warp shuffles
// (__shfl_sync, __shfl_xor_sync, __shfl_down_sync), atomicCAS / atomicAdd,
// float2 / float4, the bf16 intrinsics the kernels use, and mma.cuh's
// primitives (mma.m16n8k16 bf16, ldmatrix x4 with and without .trans, bf16
// packing) with the fragment layouts of the PTX ISA. The math functions
// (expf, sincosf, ...) are the host's: they may differ from CUDA's in the
// last bit, as the CPU backend's do.
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
// threads (each with its own fibers). A block has 1 to 1024 threads; a
// partial last warp has fewer lanes, and a shuffle from a lane it lacks
// stops the run.
//
// Static __shared__ variables are thread_local statics: one copy per OS
// thread, which runs one block at a time, so the threads of a block share
// them as on a GPU. Unlike dynamic shared memory they are not refilled per
// block (they start as zeros and keep the previous block's values, as a
// GPU's would keep garbage).
//
// Checks a GPU would not make but a bug would need: every lane of a warp
// must reach the same collective with the same operation (divergent
// collectives stop the run), barriers that can never complete are reported
// as a deadlock, ldmatrix row addresses must be 16-byte aligned and inside
// the block's shared memory, and dynamic shared memory starts filled with
// 0xff bytes (NaN in bf16 and float32), so reading what no thread wrote
// shows.
//
// emu::fault (set by the tests' --fault=) breaks one primitive on purpose,
// to show that the tests notice a wrong fragment layout or reduction.
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
// One copy per OS thread, which runs one block at a time (file comment).
#define __shared__ static thread_local

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};

struct alignas(16) uint4 {
  unsigned x, y, z, w;
};

struct float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) {
  return {x, y, z, w};
}

/// bf16 in memory: the upper half of a float32. Kernels only move its bits.
struct __nv_bfloat16 {
  uint16_t bits;
};

/// CUDA's integer min/max for device code (the host has only std::min).
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline int64_t min(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t max(int64_t a, int64_t b) { return a > b ? a : b; }

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
/// The lanes of the running thread's warp: 32, or fewer in a partial warp.
int warpLanes();
/// Posts `bytes` bytes under `op`, waits for the warp, and returns what lane
/// `source` posted; stops the run if the warp has no such lane.
const unsigned char *shuffle(const char *op, const void *data, size_t bytes,
                             int source);

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
/// "mma-b-layout" (B fragment read with its k pairs swapped),
/// "ldmatrix-trans" (.trans ignored) or "shfl-xor" (__shfl_xor_sync with
/// lane mask 16 returns the lane's own value, so xor-butterfly reductions
/// combine each half-warp only); for the emulated device's offload copies
/// (emulated_device.cpp), "fence-wait" (waiting for a fence does not wait
/// for the copies to the host before it) or "upload-order" (ordering the
/// device after an upload does not wait for it).
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

/// x of lane `source` (any trivially copyable T, as CUDA's templates).
template <typename T> inline T emuShuffle(const char *op, T x, int source) {
  T y;
  std::memcpy(&y, emu::shuffle(op, &x, sizeof(x), source), sizeof(y));
  return y;
}
template <typename T> inline T __shfl_sync(unsigned, T x, int srcLane) {
  return emuShuffle("shfl.idx", x, srcLane % 32);
}
template <typename T> inline T __shfl_xor_sync(unsigned, T x, int laneMask) {
  int source = emu::laneId() ^ laneMask;
  if (laneMask == 16 && emu::fault == "shfl-xor")
    source = emu::laneId();
  return emuShuffle("shfl.xor", x, source);
}
template <typename T> inline T __shfl_down_sync(unsigned, T x, unsigned delta) {
  // Lanes past the end keep their own value, as on a GPU.
  const int source = emu::laneId() + (int)delta;
  return emuShuffle("shfl.down", x,
                    source < emu::warpLanes() ? source : emu::laneId());
}

/// Atomic across blocks: the fibers of a block share an OS thread, but
/// blocks run on several.
inline int atomicCAS(int *address, int compare, int value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_SEQ_CST,
                              __ATOMIC_SEQ_CST);
  return compare;
}

//===--- cuda_bf16.h ------------------------------------------------------===//

inline float __bfloat162float(__nv_bfloat16 x) {
  return emu::bf16ToFloat(x.bits);
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) {
  return __nv_bfloat16{bits};
}
/// Round to nearest even; a NaN becomes the canonical NaN, as on a GPU.
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  if (std::isnan(f))
    return __nv_bfloat16{0x7fff};
  return __nv_bfloat16{emu::roundToBf16(f)};
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
