// SHA-256, the checksum etcd appends to a backup stream (and natcd too, so
// that a backup file has etcd's layout: the database, then 32 bytes of
// SHA-256 over it). OpenSSL's libcrypto computes it: a Debian package every
// TLS-capable build here already has (libssl-dev), and not worth writing.
//
// Thread safety: one object per thread; distinct objects are independent.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace natcd {

class Sha256 {
 public:
  static constexpr size_t kDigestBytes = 32;
  using Digest = std::array<uint8_t, kDigestBytes>;

  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(const void* data, size_t n);
  void Update(std::string_view bytes) { Update(bytes.data(), bytes.size()); }
  // The digest of everything given since construction; the object is spent.
  Digest Final();

 private:
  struct Ctx;
  Ctx* ctx_;
};

// Lowercase hex of a digest (64 characters).
std::string HexOf(const Sha256::Digest& digest);

}  // namespace natcd
