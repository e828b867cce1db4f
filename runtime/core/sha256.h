//===- sha256.h - SHA-256 of checkpoint files -------------------*- C++ -*-===//
//
// FIPS 180-4 SHA-256, streaming, for the digests a training-state checkpoint
// records of every file and tensor (train_state.h). Small and dependency
// free: libzrt links no crypto library for one hash.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_SHA256_H
#define ZRT_CORE_SHA256_H

#include <array>
#include <cstdint>
#include <string>

namespace zrt {

class Sha256 {
public:
  Sha256();
  void update(const void *data, size_t bytes);
  /// The digest as 64 lowercase hex digits; the object is then spent.
  std::string hexDigest();

private:
  void block(const unsigned char *p);
  std::array<uint32_t, 8> h;
  unsigned char buffer[64];
  size_t buffered = 0;
  uint64_t totalBytes = 0;
};

} // namespace zrt

#endif // ZRT_CORE_SHA256_H
