//===- sha256.h - SHA-256 of checkpoint files -------------------*- C++ -*-===//
//
// FIPS 180-4 SHA-256, streaming, for the digests a training-state checkpoint
// records of every file and tensor (train_state.h). Small and dependency
// free: libzrt links no crypto library for one hash. Where the CPU has the
// x86 SHA extensions (SHA-NI) the blocks are compressed by them, about five
// times faster than the portable code, which a checkpoint of a large model
// feels (bench/results/checkpoint.md).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_SHA256_H
#define ZRT_DRIVER_SHA256_H

#include <array>
#include <cstdint>
#include <string>

namespace zrt {

class Sha256 {
public:
  /// `allowHardware` false keeps to the portable code (for tests that
  /// compare the two).
  explicit Sha256(bool allowHardware = true);
  /// Whether this CPU has the SHA extensions the fast path uses.
  static bool hardwareAvailable();
  void update(const void *data, size_t bytes);
  /// The digest as 64 lowercase hex digits; the object is then spent.
  std::string hexDigest();

private:
  /// Compresses `count` 64-byte blocks at `p` into `h`.
  void blocks(const unsigned char *p, size_t count);
  std::array<uint32_t, 8> h;
  bool useHardware;
  unsigned char buffer[64];
  size_t buffered = 0;
  uint64_t totalBytes = 0;
};

} // namespace zrt

#endif // ZRT_DRIVER_SHA256_H
