//===- amx_gemm.cpp - bfloat16 GEMM on AMX tiles and AVX512-BF16 ----------===//
//
// Built with -mamx-tile -mamx-bf16 (this file only); nothing here runs
// unless amxAvailable() (or, for the AVX512-BF16 kernel at the end,
// avx512Bf16Available()) said so at run time.
//
// The tile unit multiplies a 16 x 32 bf16 tile of A by a 32 x 16 bf16 tile
// of B into a 16 x 16 float32 tile of C (TDPBF16PS), B's tile laid out in
// pairs of rows ("VNNI": row r holds B[2r][j], B[2r+1][j] for each j). So
// both operands are packed first, zero-padded to whole tiles: A to rows of
// Kp (k rounded up to 32) bf16, B to column blocks of 16, each Kp / 2 rows
// of 16 pairs. Packing reads each operand once (O(mk + kn)) against the
// O(mnk) of the product, and absorbs the transposes. The product keeps a
// 32 x 32 block of C in four tiles, loading two tiles of A and two of B per
// step of 32 along k; blocks at the right or bottom edge use fewer tiles.
//
//===----------------------------------------------------------------------===//

#include "cpu/amx_gemm.h"

#include "cpu/dtype.h"

#include <immintrin.h>

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace zrt;

namespace {
constexpr int64_t kTile = 16;   // rows of every tile; float32 columns of C
constexpr int64_t kTileK = 32;  // bf16 elements of k per tile row
constexpr int kTileBytes = 64;  // bytes of every tile row
// k per pass over C: 32 rows of A and of B, 512 deep, are 32 KB each.
constexpr int64_t kChunk = 512;

// Linux's request for the AMX tile data state (arch/x86/include/uapi/asm/
// prctl.h): without it the first tile instruction faults.
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtiledata = 18;

/// Whether `variable` is 0 in the environment: a bf16 GEMM path turned off,
/// to compare against the next one.
bool turnedOff(const char *variable) {
  const char *env = std::getenv(variable);
  return env && std::strcmp(env, "0") == 0;
}

bool detectAmx() {
  if (turnedOff("ZRT_CPU_AMX"))
    return false;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return false;
  bool amxBf16 = edx & (1u << 22), amxTile = edx & (1u << 24);
  if (!amxBf16 || !amxTile)
    return false;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

/// Every tile is 16 rows of 64 bytes: A (16 x 32 bf16), B (16 pairs of
/// rows x 16 columns), C (16 x 16 float32).
struct alignas(64) TileConfig {
  uint8_t paletteId = 1;
  uint8_t startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t colsBytes[16] = {};
  uint8_t rows[16] = {};
  TileConfig() {
    for (int t = 0; t < 8; ++t) {
      colsBytes[t] = kTileBytes;
      rows[t] = kTile;
    }
  }
};

/// GCC's tile intrinsics are asm statements that do not tell the compiler
/// they read or write memory: without this, plain stores into memory a tile
/// load reads (a staging tile, the packed operands) may be dropped or moved
/// past it, and plain reads of what a tile store wrote moved before it.
inline void memoryBarrier() { asm volatile("" ::: "memory"); }

int64_t roundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Packing moves every element of both operands once per call, as many
// bytes as the tile unit needs seconds for a GEMM of these sizes: done an
// element at a time it took 40% of each GEMM. Every CPU with AMX has
// AVX-512 (F and BW), so the packing loops use it; only these functions are
// compiled for it, and they run only once amxAvailable() said yes.
#define ZRT_AVX512 __attribute__((target("avx512f,avx512bw")))

/// 16 pairs (even[t], odd[t]) of bf16 as 16 dwords: the VNNI layout of two
/// rows.
ZRT_AVX512 inline __m512i interleavePairs(const uint16_t *even,
                                          const uint16_t *odd) {
  __m512i e = _mm512_cvtepu16_epi32(
      _mm256_loadu_si256(reinterpret_cast<const __m256i *>(even)));
  __m512i o = _mm512_cvtepu16_epi32(
      _mm256_loadu_si256(reinterpret_cast<const __m256i *>(odd)));
  return _mm512_or_si512(e, _mm512_slli_epi32(o, 16));
}

/// Byte offsets 0, stride, 2 stride, ... 15 stride, for gathers and
/// scatters of one dword from each of 16 rows.
ZRT_AVX512 inline __m512i rowOffsets(int64_t strideBytes) {
  return _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
      _mm512_set1_epi32(int32_t(strideBytes)));
}

/// A (m x k, or stored k x m when transA) into mp x kp bf16 rows, the
/// padding zero.
ZRT_AVX512 void packA(const uint16_t *a, uint16_t *ap, int64_t m, int64_t k, int64_t mp,
           int64_t kp, bool transA) {
  for (int64_t i = 0; i < mp; ++i) {
    uint16_t *row = ap + i * kp;
    int64_t filled = i < m ? k : 0;
    if (i < m && !transA)
      std::memcpy(row, a + i * k, sizeof(uint16_t) * k);
    std::memset(row + filled, 0, sizeof(uint16_t) * (kp - filled));
  }
  if (!transA)
    return;
  // a[kk][i]: the pair (a[2r][i], a[2r + 1][i]) of 16 columns at once,
  // interleaved from two rows of stored a and scattered to 16 rows of ap.
  // What is left (the last columns, an odd last k) an element at a time.
  int64_t wholeColumns = m / kTile * kTile, wholePairs = k / 2;
  if (kp * 2 * kTile < INT32_MAX) {
    __m512i toRows = rowOffsets(kp * int64_t(sizeof(uint16_t)));
    for (int64_t i0 = 0; i0 < wholeColumns; i0 += kTile)
      for (int64_t r = 0; r < wholePairs; ++r)
        _mm512_i32scatter_epi32(ap + i0 * kp + 2 * r, toRows,
                                interleavePairs(a + 2 * r * m + i0,
                                                a + (2 * r + 1) * m + i0),
                                1);
  } else {
    wholeColumns = wholePairs = 0;
  }
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t i = kk < 2 * wholePairs ? wholeColumns : 0; i < m; ++i)
      ap[i * kp + kk] = a[kk * m + i];
}

/// B (k x n, or stored n x k when transB) into column blocks of 16: block
/// jb holds kp / 2 lines of 16 pairs (B[2r][j], B[2r + 1][j]), 64 bytes
/// each; the padding zero.
ZRT_AVX512 void packB(const uint16_t *b, uint16_t *bp, int64_t n, int64_t k, int64_t np,
           int64_t kp, bool transB) {
  auto element = [&](int64_t kk, int64_t j) -> uint16_t {
    if (kk >= k || j >= n)
      return 0;
    return transB ? b[j * k + kk] : b[kk * n + j];
  };
  auto line = [&](int64_t jb, int64_t r) {
    return bp + jb * kTile * kp + r * 2 * kTile;
  };
  int64_t blocks = np / kTile, pairs = kp / 2;
  if (!transB) {
    // Two rows of b at a time, across every block: b is read in order.
    for (int64_t r = 0; r < pairs; ++r)
      for (int64_t jb = 0; jb < blocks; ++jb) {
        uint16_t *out = line(jb, r);
        int64_t j0 = jb * kTile;
        if (2 * r + 1 < k && j0 + kTile <= n) {
          const uint16_t *even = b + 2 * r * n + j0;
          _mm512_storeu_si512(out, interleavePairs(even, even + n));
        } else {
          for (int64_t t = 0; t < kTile; ++t) {
            out[2 * t] = element(2 * r, j0 + t);
            out[2 * t + 1] = element(2 * r + 1, j0 + t);
          }
        }
      }
    return;
  }
  // A row of stored b holds column j's k values in order: its pairs are
  // consecutive, and each line gathers one pair (a dword) from 16 rows.
  bool gather = k * int64_t(sizeof(uint16_t)) * kTile < INT32_MAX;
  __m512i fromRows = rowOffsets(gather ? k * int64_t(sizeof(uint16_t)) : 0);
  for (int64_t jb = 0; jb < blocks; ++jb) {
    int64_t j0 = jb * kTile;
    bool wholeBlock = j0 + kTile <= n;
    for (int64_t r = 0; r < pairs; ++r) {
      uint16_t *out = line(jb, r);
      if (gather && wholeBlock && 2 * r + 1 < k) {
        _mm512_storeu_si512(
            out, _mm512_i32gather_epi32(fromRows, b + j0 * k + 2 * r, 1));
      } else {
        for (int64_t t = 0; t < kTile; ++t) {
          out[2 * t] = element(2 * r, j0 + t);
          out[2 * t + 1] = element(2 * r + 1, j0 + t);
        }
      }
    }
  }
}

/// Both operands packed for one product (by the tiles or by VDPBF16PS):
/// A in mp rows of kp bf16, B in np / 16 blocks of kp / 2 lines, every
/// size rounded up to whole tiles and the padding zero.
struct PackedOperands {
  int64_t mp, np, kp;
  // Scratch is leased in floats: two bf16 a float.
  ScratchLease aLease, bLease;
  uint16_t *ap, *bp;

  PackedOperands(const uint16_t *a, const uint16_t *b, int64_t m, int64_t n,
                 int64_t k, bool transA, bool transB)
      : mp(roundUp(m, kTile)), np(roundUp(n, kTile)),
        kp(roundUp(std::max<int64_t>(k, 1), kTileK)),
        aLease((mp * kp + 1) / 2), bLease((np * kp + 1) / 2),
        ap(reinterpret_cast<uint16_t *>(aLease.get())),
        bp(reinterpret_cast<uint16_t *>(bLease.get())) {
    packA(a, ap, m, k, mp, kp, transA);
    packB(b, bp, n, k, np, kp, transB);
  }
};

/// Stores a tile of C (rows i0.., columns j0..) by `store(pointer,
/// stride)`: straight into c when the tile lies inside it, else through a
/// 16 x 16 staging tile. (GCC spells the tile register into the assembly,
/// so each tile's store is its own lambda with a literal number.)
template <typename Store>
void storeTile(float *c, int64_t m, int64_t n, int64_t i0, int64_t j0,
               Store store) {
  if (i0 + kTile <= m && j0 + kTile <= n) {
    store(c + i0 * n + j0, n * sizeof(float));
    memoryBarrier();
    return;
  }
  alignas(64) float staged[kTile * kTile];
  store(staged, kTile * sizeof(float));
  memoryBarrier();
  for (int64_t i = i0; i < std::min(m, i0 + kTile); ++i)
    for (int64_t j = j0; j < std::min(n, j0 + kTile); ++j)
      c[i * n + j] = staged[(i - i0) * kTile + (j - j0)];
}

/// Loads a tile of C by `load(pointer, stride)`, the inverse of storeTile.
template <typename Load>
void loadTile(const float *c, int64_t m, int64_t n, int64_t i0, int64_t j0,
              Load load) {
  memoryBarrier();
  if (i0 + kTile <= m && j0 + kTile <= n) {
    load(c + i0 * n + j0, n * sizeof(float));
    return;
  }
  alignas(64) float staged[kTile * kTile] = {};
  for (int64_t i = i0; i < std::min(m, i0 + kTile); ++i)
    for (int64_t j = j0; j < std::min(n, j0 + kTile); ++j)
      staged[(i - i0) * kTile + (j - j0)] = c[i * n + j];
  memoryBarrier();
  load(staged, kTile * sizeof(float));
}

/// Adds the product over k in [k0, k1) into one block of C of MT x NT tiles
/// (each 1 or 2) at tile row ib, tile column jb; C starts from zero when
/// `first`, else from what c holds. Tiles 0-3 hold C, 4-5 A, 6-7 B.
template <int MT, int NT>
void multiplyBlock(const uint16_t *ap, const uint16_t *bp, float *c,
                   int64_t m, int64_t n, int64_t kp, int64_t ib, int64_t jb,
                   int64_t k0, int64_t k1, bool first) {
  int64_t i0 = ib * kTile, j0 = jb * kTile;
  if (first) {
    _tile_zero(0);
    if constexpr (NT == 2)
      _tile_zero(1);
    if constexpr (MT == 2)
      _tile_zero(2);
    if constexpr (MT == 2 && NT == 2)
      _tile_zero(3);
  } else {
    loadTile(c, m, n, i0, j0,
             [](const float *p, int64_t s) { _tile_loadd(0, p, s); });
    if constexpr (NT == 2)
      loadTile(c, m, n, i0, j0 + kTile,
               [](const float *p, int64_t s) { _tile_loadd(1, p, s); });
    if constexpr (MT == 2)
      loadTile(c, m, n, i0 + kTile, j0,
               [](const float *p, int64_t s) { _tile_loadd(2, p, s); });
    if constexpr (MT == 2 && NT == 2)
      loadTile(c, m, n, i0 + kTile, j0 + kTile,
               [](const float *p, int64_t s) { _tile_loadd(3, p, s); });
  }
  const uint16_t *a0 = ap + i0 * kp;
  const uint16_t *a1 = a0 + kTile * kp;
  const uint16_t *b0 = bp + j0 * kp;
  const uint16_t *b1 = b0 + kTile * kp;
  const int64_t aStride = kp * sizeof(uint16_t);
  for (int64_t kk = k0; kk < k1; kk += kTileK) {
    _tile_loadd(4, a0 + kk, aStride);
    _tile_loadd(6, b0 + kk * kTile, kTileBytes);
    if constexpr (NT == 2)
      _tile_loadd(7, b1 + kk * kTile, kTileBytes);
    if constexpr (MT == 2)
      _tile_loadd(5, a1 + kk, aStride);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (NT == 2)
      _tile_dpbf16ps(1, 4, 7);
    if constexpr (MT == 2)
      _tile_dpbf16ps(2, 5, 6);
    if constexpr (MT == 2 && NT == 2)
      _tile_dpbf16ps(3, 5, 7);
  }
  storeTile(c, m, n, i0, j0,
            [](float *p, int64_t s) { _tile_stored(0, p, s); });
  if constexpr (NT == 2)
    storeTile(c, m, n, i0, j0 + kTile,
              [](float *p, int64_t s) { _tile_stored(1, p, s); });
  if constexpr (MT == 2)
    storeTile(c, m, n, i0 + kTile, j0,
              [](float *p, int64_t s) { _tile_stored(2, p, s); });
  if constexpr (MT == 2 && NT == 2)
    storeTile(c, m, n, i0 + kTile, j0 + kTile,
              [](float *p, int64_t s) { _tile_stored(3, p, s); });
}

/// The block of C at tile (ib, jb), as many tiles as are left (at most 2 x 2).
void multiplyBlockAt(const uint16_t *ap, const uint16_t *bp, float *c,
                     int64_t m, int64_t n, int64_t kp, int64_t tileRows,
                     int64_t tileCols, int64_t ib, int64_t jb, int64_t k0,
                     int64_t k1, bool first) {
  bool twoRows = ib + 1 < tileRows, twoCols = jb + 1 < tileCols;
  if (twoRows && twoCols)
    multiplyBlock<2, 2>(ap, bp, c, m, n, kp, ib, jb, k0, k1, first);
  else if (twoRows)
    multiplyBlock<2, 1>(ap, bp, c, m, n, kp, ib, jb, k0, k1, first);
  else if (twoCols)
    multiplyBlock<1, 2>(ap, bp, c, m, n, kp, ib, jb, k0, k1, first);
  else
    multiplyBlock<1, 1>(ap, bp, c, m, n, kp, ib, jb, k0, k1, first);
}

//===--- The same product with AVX512-BF16, for CPUs without AMX ----------===//
//
// VDPBF16PS adds, in each of 16 float32 lanes, the two products of a pair
// of bf16 to the lane: a line of packed B (16 columns, one pair of k each)
// against one pair of a row of A broadcast to every lane. The block of C
// kept in registers is 8 rows x 32 columns (16 accumulators, two lines of
// B, one broadcast: 19 of the 32 zmm registers), over the same packed
// operands as the tiles; rows past m are the packing's zeros, and columns
// past n are masked off when C is loaded and stored. Where k fits one pass
// (most of a transformer's GEMMs) the sums go from the registers to bf16
// directly: rounding a float32 C in a second pass cost GPT-2 124M's bf16
// GEMMs at 2 x 128 rows a rank about 10% of their time.

#define ZRT_AVX512_BF16                                                        \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

bool detectAvx512Bf16() {
  if (turnedOff("ZRT_CPU_BF16_DOT"))
    return false;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return false;
  bool avx512f = ebx & (1u << 16), avx512bw = ebx & (1u << 30),
       avx512vl = ebx & (1u << 31);
  if (!avx512f || !avx512bw || !avx512vl)
    return false;
  // Leaf 7, sub-leaf 1: EAX bit 5 is AVX512_BF16.
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
    return false;
  return eax & (1u << 5);
}

constexpr int64_t kDotRows = 8;
// A product whose k (padded) is at most this is done in one pass over k,
// and each block of C goes from the registers straight to bf16: no float32
// C, and no second pass to round it. Two line blocks of B are then at most
// 64 KB, which L2 holds as the rows of A stream past them.
constexpr int64_t kDotOnePassK = 1024;

/// Rounds 16 float32 lanes to bfloat16 as bf16::roundFromFloat does (ties
/// to even, NaNs quieted with their sign): VCVTNEPS2BF16 would flush
/// denormals, and the CPU kernels must round alike wherever they round.
ZRT_AVX512_BF16 inline __m256i roundToBf16(__m512 value) {
  __m512i bits = _mm512_castps_si512(value);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16),
                                 _mm512_set1_epi32(1));
  __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))),
      16);
  __mmask16 nan = _mm512_cmpgt_epu32_mask(
      _mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff)),
      _mm512_set1_epi32(0x7f800000));
  __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(bits, 16),
                                  _mm512_set1_epi32(0x0040));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet));
}

/// Where a block's sums go: `partial` (float32, m x n) holds them between
/// passes over k; the last pass rounds them into `out` (bf16, m x n).
struct DotOutput {
  float *partial;
  uint16_t *out;
};

/// C rows [i0, i0 + kDotRows) x columns [jb * 16, (jb + NB) * 16) (NB line
/// blocks of 16) plus the product over k in [k0, k1) (even, within kp):
/// starting from zero when `first`, else from `c.partial`; stored to
/// `c.out` in bf16 when `last`, else to `c.partial`. Rows at or past m are
/// computed and dropped.
template <int NB>
ZRT_AVX512_BF16 void dotBlock(const uint16_t *ap, const uint16_t *bp,
                              DotOutput c, int64_t m, int64_t n, int64_t kp,
                              int64_t i0, int64_t jb, int64_t k0, int64_t k1,
                              bool first, bool last) {
  __m512 acc[kDotRows][NB];
  __mmask16 mask[NB];
  for (int b = 0; b < NB; ++b) {
    int64_t left = n - (jb + b) * kTile;
    mask[b] = left >= kTile ? __mmask16(0xffff)
                            : __mmask16((1u << std::max<int64_t>(left, 0)) - 1);
  }
  // Rows past m are masked off rather than left out: every loop over the
  // block then has constant bounds, which the compiler unrolls.
  auto rowMask = [&](int64_t r, int b) {
    return i0 + r < m ? mask[b] : __mmask16(0);
  };
  for (int64_t r = 0; r < kDotRows; ++r)
    for (int b = 0; b < NB; ++b)
      acc[r][b] = first ? _mm512_setzero_ps()
                        : _mm512_maskz_loadu_ps(rowMask(r, b),
                                                c.partial + (i0 + r) * n +
                                                    (jb + b) * kTile);
  const uint16_t *lines[NB];
  for (int b = 0; b < NB; ++b)
    lines[b] = bp + (jb + b) * kTile * kp;
  const uint16_t *rows = ap + i0 * kp;
  for (int64_t kk = k0; kk < k1; kk += 2) {
    __m512bh line[NB];
    for (int b = 0; b < NB; ++b)
      line[b] = (__m512bh)_mm512_loadu_si512(lines[b] + kk * kTile);
    for (int64_t r = 0; r < kDotRows; ++r) {
      int32_t pair;
      std::memcpy(&pair, rows + r * kp + kk, sizeof(pair));
      __m512bh a = (__m512bh)_mm512_set1_epi32(pair);
      for (int b = 0; b < NB; ++b)
        acc[r][b] = _mm512_dpbf16_ps(acc[r][b], a, line[b]);
    }
  }
  for (int64_t r = 0; r < kDotRows; ++r)
    for (int b = 0; b < NB; ++b) {
      int64_t at = (i0 + r) * n + (jb + b) * kTile;
      if (last)
        _mm256_mask_storeu_epi16(c.out + at, rowMask(r, b),
                                 roundToBf16(acc[r][b]));
      else
        _mm512_mask_storeu_ps(c.partial + at, rowMask(r, b), acc[r][b]);
    }
}
} // namespace

bool zrt::cpu::amxAvailable() {
  static const bool available = detectAmx();
  return available;
}

void zrt::cpu::amxGemmBf16(const uint16_t *a, const uint16_t *b, float *c,
                           int64_t m, int64_t n, int64_t k, bool transA,
                           bool transB) {
  PackedOperands packed(a, b, m, n, k, transA, transB);
  const uint16_t *ap = packed.ap, *bp = packed.bp;
  int64_t mp = packed.mp, np = packed.np, kp = packed.kp;

  TileConfig config;
  memoryBarrier();
  _tile_loadconfig(&config);
  int64_t tileRows = mp / kTile, tileCols = np / kTile;
  // k in chunks, so that a chunk's packed rows of A and columns of B stay in
  // L2 while they are reused; the operand with fewer rows (of C) is the one
  // kept across the inner loop.
  for (int64_t k0 = 0; k0 < kp; k0 += kChunk) {
    int64_t k1 = std::min(kp, k0 + kChunk);
    bool first = k0 == 0;
    if (np <= mp) {
      for (int64_t ib = 0; ib < tileRows; ib += 2)
        for (int64_t jb = 0; jb < tileCols; jb += 2)
          multiplyBlockAt(ap, bp, c, m, n, kp, tileRows, tileCols, ib, jb, k0,
                          k1, first);
    } else {
      for (int64_t jb = 0; jb < tileCols; jb += 2)
        for (int64_t ib = 0; ib < tileRows; ib += 2)
          multiplyBlockAt(ap, bp, c, m, n, kp, tileRows, tileCols, ib, jb, k0,
                          k1, first);
    }
  }
  _tile_release();
  memoryBarrier();
}

bool zrt::cpu::avx512Bf16Available() {
  static const bool available = detectAvx512Bf16();
  return available;
}

void zrt::cpu::avx512Bf16GemmBf16(const uint16_t *a, const uint16_t *b,
                                  uint16_t *c, int64_t m, int64_t n, int64_t k,
                                  bool transA, bool transB) {
  // The tiles' packing: rows of A padded to 16 (two blocks of 8), lines of
  // B in blocks of 16 columns, k to 32 (whole pairs).
  PackedOperands packed(a, b, m, n, k, transA, transB);
  const uint16_t *ap = packed.ap, *bp = packed.bp;
  int64_t kp = packed.kp, lineBlocks = packed.np / kTile;
  // A deep k in chunks (a chunk of two line blocks is 64 KB: L2), the sums
  // kept in float32 between them.
  bool onePass = kp <= kDotOnePassK;
  int64_t chunk = onePass ? kp : kChunk;
  std::optional<ScratchLease> partial;
  if (!onePass)
    partial.emplace(m * n);
  DotOutput out{partial ? partial->get() : nullptr, c};
  // Each pair of line blocks sweeps every row of A.
  for (int64_t k0 = 0; k0 < kp; k0 += chunk) {
    int64_t k1 = std::min(kp, k0 + chunk);
    bool first = k0 == 0, last = k1 == kp;
    for (int64_t jb = 0; jb < lineBlocks; jb += 2)
      for (int64_t i0 = 0; i0 < m; i0 += kDotRows) {
        if (jb + 1 < lineBlocks)
          dotBlock<2>(ap, bp, out, m, n, kp, i0, jb, k0, k1, first, last);
        else
          dotBlock<1>(ap, bp, out, m, n, kp, i0, jb, k0, k1, first, last);
      }
  }
}
