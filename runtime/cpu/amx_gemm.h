//===- amx_gemm.h - bfloat16 GEMM on AMX tiles and AVX512-BF16 -*- C++ -*-===//
//
// The bf16 GEMM of zrt_matmul on CPUs with AMX-BF16 (Sapphire Rapids and
// later): bf16 products summed in float32 by the tile unit's TDPBF16PS,
// about eight times the float32 FMA rate of AVX-512, instead of widening
// both operands and calling sgemm. PyTorch's oneDNN takes the same path for
// bf16 on these CPUs. Used wherever the CPU has it; ZRT_CPU_AMX=0 turns it
// off (to compare). Without AMX, AVX512-BF16's VDPBF16PS does the same
// product on the same packed operands at twice the float32 FMA rate
// (Cooper Lake, Zen 4; ZRT_CPU_BF16_DOT=0 turns it off); elsewhere
// zrt_matmul keeps the widening path.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CPU_AMX_GEMM_H
#define ZRT_CPU_AMX_GEMM_H

#include <cstdint>

namespace zrt::cpu {

/// True when this CPU has AMX-BF16, Linux granted the process the tile
/// state, and ZRT_CPU_AMX is not 0. Decided once per process.
bool amxAvailable();

/// c (m x n, float32, row-major) = op(a) * op(b) for bf16 a and b stored
/// row-major: a is m x k (k x m when `transA`), b is k x n (n x k when
/// `transB`). Each c element is a float32 sum of exact bf16 products.
/// Requires amxAvailable().
void amxGemmBf16(const uint16_t *a, const uint16_t *b, float *c, int64_t m,
                 int64_t n, int64_t k, bool transA, bool transB);

/// True when this CPU has AVX512-BF16 (Cooper Lake, Zen 4 and later) and
/// ZRT_CPU_BF16_DOT is not 0. Decided once per process.
bool avx512Bf16Available();

/// amxGemmBf16's product by VDPBF16PS, on the same packed operands, each
/// c element a float32 sum of exact bf16 products (two at a time) rounded
/// once to bf16 (c is m x n bf16, row-major), as rounding amxGemmBf16's
/// float32 result would. Requires avx512Bf16Available().
void avx512Bf16GemmBf16(const uint16_t *a, const uint16_t *b, uint16_t *c,
                        int64_t m, int64_t n, int64_t k, bool transA,
                        bool transB);

} // namespace zrt::cpu

#endif // ZRT_CPU_AMX_GEMM_H
