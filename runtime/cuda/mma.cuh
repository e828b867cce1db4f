//===- mma.cuh - Warp-level tensor-core primitives --------------*- CUDA
//-*-===//
//
// The few warp-level operations the tensor-core attention kernels
// (attention_tc_kernels.cuh) are written in, each a small inline function so
// that the same kernel source compiles for the GPU (here: inline PTX) and for
// the host emulator of runtime/cuda/tests/emulation (ZRT_CUDA_EMULATION
// defined: cuda_emulation.h supplies these functions, with the PTX ISA's
// fragment layouts, over one fiber per CUDA thread).
//
// Operands are bf16 pairs packed in a 32-bit register, the low half holding
// the element of lower column (or row) index, as the PTX ISA specifies for
// .bf16x2 fragments:
//  - mmaBf16: D = A B + D, mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32;
//    A is 16 x 16 (4 registers), B is 16 x 8 (2 registers), C/D 16 x 8 f32
//    (4 registers). With g = lane / 4 and t = lane % 4: a0 = A[g][2t..2t+1],
//    a1 = A[g+8][2t..], a2 = A[g][2t+8..], a3 = A[g+8][2t+8..];
//    b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]; d0, d1 = D[g][2t], D[g][2t+1],
//    d2, d3 = D[g+8][2t], D[g+8][2t+1].
//  - ldmatrixX4 / ldmatrixX4Trans: ldmatrix.sync.aligned.m8n8.x4(.trans)
//    .shared.b16. Lanes 8i..8i+7 give the addresses of rows 0..7 of matrix i
//    (16 bytes each, 16-byte aligned, in shared memory); register i of lane
//    l receives row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of matrix i,
//    or with .trans the transpose: rows 2 (l % 4) and 2 (l % 4) + 1 of
//    column l / 4.
//  - packBf16x2 rounds two floats to bf16 (nearest even) into one register.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_MMA_CUH
#define ZRT_CUDA_MMA_CUH

#ifdef ZRT_CUDA_EMULATION
#include "cuda_emulation.h"
#else

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zrt::cuda::tc {

using Bf16 = __nv_bfloat16;

/// D = A B + D on the tensor cores (layouts: file comment).
__device__ __forceinline__ void mmaBf16(float (&d)[4], const uint32_t (&a)[4],
                                        uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Four 8 x 8 bf16 matrices from shared memory; `row` is this lane's row
/// address (file comment). The "memory" clobber keeps the compiler from
/// moving the load across this thread's own shared-memory stores.
__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], const Bf16 *row) {
  unsigned address = (unsigned)__cvta_generic_to_shared(row);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
               "{%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address)
               : "memory");
}

/// ldmatrixX4, each 8 x 8 matrix transposed on the way.
__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4],
                                                const Bf16 *row) {
  unsigned address = (unsigned)__cvta_generic_to_shared(row);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
               "{%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address)
               : "memory");
}

/// bf16(lo) in the low half, bf16(hi) in the high half, rounded to nearest
/// even.
__device__ __forceinline__ uint32_t packBf16x2(float lo, float hi) {
  __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&pair);
}

/// The two bf16 of a packed register, widened (exactly) to float.
__device__ __forceinline__ float lowBf16(uint32_t pair) {
  return __uint_as_float(pair << 16);
}
__device__ __forceinline__ float highBf16(uint32_t pair) {
  return __uint_as_float(pair & 0xffff0000u);
}

__device__ __forceinline__ float shflXor(float x, int laneMask) {
  return __shfl_xor_sync(0xffffffffu, x, laneMask);
}

/// The block's dynamic shared memory (16-byte aligned).
template <typename T> __device__ __forceinline__ T *dynamicSmem() {
  extern __shared__ uint4 dynamicSmemBase[];
  return reinterpret_cast<T *>(dynamicSmemBase);
}

} // namespace zrt::cuda::tc

#endif // ZRT_CUDA_EMULATION
#endif // ZRT_CUDA_MMA_CUH
