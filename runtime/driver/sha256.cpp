//===- sha256.cpp - SHA-256 (FIPS 180-4) ----------------------------------===//

#include "driver/sha256.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ZRT_SHA256_X86 1
#endif

using namespace zrt;

static const uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/// One block by the portable code.
static void portableBlock(std::array<uint32_t, 8> &h, const unsigned char *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
           (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6],
           k = h[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                  ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
                  ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d;
  h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

#ifdef ZRT_SHA256_X86
/// Blocks by the SHA extensions. The state is kept as the two vectors the
/// instructions take (ABEF and CDGH); each group of four rounds adds the
/// round constants to four message words, runs two double rounds, and
/// extends the message schedule four words ahead (sha256msg1/msg2).
__attribute__((target("sha,sse4.1"))) static void
hardwareBlocks(std::array<uint32_t, 8> &h, const unsigned char *p,
               size_t count) {
  const __m128i byteSwap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_loadu_si128((const __m128i *)&h[0]);
  __m128i state1 = _mm_loadu_si128((const __m128i *)&h[4]);
  tmp = _mm_shuffle_epi32(tmp, 0xB1);               // CDAB
  state1 = _mm_shuffle_epi32(state1, 0x1B);         // EFGH
  __m128i state0 = _mm_alignr_epi8(tmp, state1, 8); // ABEF
  state1 = _mm_blend_epi16(state1, tmp, 0xF0);      // CDGH
  for (; count; --count, p += 64) {
    __m128i savedAbef = state0, savedCdgh = state1;
    __m128i w[4];
    for (int g = 0; g < 16; ++g) {
      __m128i &current = w[g % 4];
      if (g < 4)
        current = _mm_shuffle_epi8(
            _mm_loadu_si128((const __m128i *)(p + 16 * g)), byteSwap);
      __m128i msg = _mm_add_epi32(
          current, _mm_loadu_si128((const __m128i *)&kRound[4 * g]));
      state1 = _mm_sha256rnds2_epu32(state1, state0, msg);
      if (g >= 3 && g <= 14) {
        __m128i &next = w[(g + 1) % 4];
        next = _mm_add_epi32(next, _mm_alignr_epi8(current, w[(g + 3) % 4], 4));
        next = _mm_sha256msg2_epu32(next, current);
      }
      msg = _mm_shuffle_epi32(msg, 0x0E);
      state0 = _mm_sha256rnds2_epu32(state0, state1, msg);
      if (g >= 1 && g <= 12)
        w[(g + 3) % 4] = _mm_sha256msg1_epu32(w[(g + 3) % 4], current);
    }
    state0 = _mm_add_epi32(state0, savedAbef);
    state1 = _mm_add_epi32(state1, savedCdgh);
  }
  tmp = _mm_shuffle_epi32(state0, 0x1B);       // FEBA
  state1 = _mm_shuffle_epi32(state1, 0xB1);    // DCHG
  state0 = _mm_blend_epi16(tmp, state1, 0xF0); // DCBA
  state1 = _mm_alignr_epi8(state1, tmp, 8);    // ABEF
  _mm_storeu_si128((__m128i *)&h[0], state0);
  _mm_storeu_si128((__m128i *)&h[4], state1);
}
#endif

bool Sha256::hardwareAvailable() {
#ifdef ZRT_SHA256_X86
  static const bool available =
      __builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1");
  return available;
#else
  return false;
#endif
}

Sha256::Sha256(bool allowHardware)
    : h{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19},
      useHardware(allowHardware && hardwareAvailable()) {}

void Sha256::blocks(const unsigned char *p, size_t count) {
#ifdef ZRT_SHA256_X86
  if (useHardware)
    return hardwareBlocks(h, p, count);
#endif
  for (; count; --count, p += 64)
    portableBlock(h, p);
}

void Sha256::update(const void *data, size_t bytes) {
  const unsigned char *p = (const unsigned char *)data;
  totalBytes += bytes;
  if (buffered) {
    size_t take = std::min(bytes, sizeof(buffer) - buffered);
    std::memcpy(buffer + buffered, p, take);
    buffered += take;
    p += take;
    bytes -= take;
    if (buffered < sizeof(buffer))
      return;
    blocks(buffer, 1);
    buffered = 0;
  }
  blocks(p, bytes / 64);
  p += bytes / 64 * 64;
  bytes %= 64;
  std::memcpy(buffer, p, bytes);
  buffered = bytes;
}

std::string Sha256::hexDigest() {
  uint64_t bits = totalBytes * 8;
  unsigned char pad[72] = {0x80};
  size_t padBytes = (buffered < 56 ? 56 : 120) - buffered;
  for (int i = 0; i < 8; ++i)
    pad[padBytes + i] = (unsigned char)(bits >> (56 - 8 * i));
  update(pad, padBytes + 8);
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (uint32_t word : h)
    for (int shift = 28; shift >= 0; shift -= 4)
      out += hex[(word >> shift) & 15];
  return out;
}
