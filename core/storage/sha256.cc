#include "storage/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

namespace natcd {

struct Sha256::Ctx {
  EVP_MD_CTX* md = nullptr;
};

Sha256::Sha256() : ctx_(new Ctx) {
  ctx_->md = EVP_MD_CTX_new();
  // Out of memory or a libcrypto without SHA-256: nothing sensible to do.
  if (ctx_->md == nullptr || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1) abort();
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(ctx_->md);
  delete ctx_;
}

void Sha256::Update(const void* data, size_t n) {
  if (n > 0 && EVP_DigestUpdate(ctx_->md, data, n) != 1) abort();
}

Sha256::Digest Sha256::Final() {
  Digest digest{};
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx_->md, digest.data(), &n) != 1 || n != kDigestBytes) abort();
  return digest;
}

std::string HexOf(const Sha256::Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * digest.size());
  for (uint8_t b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

}  // namespace natcd
