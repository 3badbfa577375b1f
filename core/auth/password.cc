#include "auth/password.h"

#include <crypt.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace natcd::auth {
namespace {

// bcrypt reads at most 72 bytes of a password, and crypt(3) takes a C
// string: a NUL would cut it silently, so such a password is refused.
bool Hashable(std::string_view password) { return password.find('\0') == std::string_view::npos; }

}  // namespace

Result<std::string> HashPassword(std::string_view password, int cost) {
  if (!Hashable(password)) {
    return Status::InvalidArgument("ErrInvalidArgument", "a password cannot contain a NUL byte");
  }
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  // A null random source: libxcrypt reads the system's (getentropy).
  if (crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt) ==
      nullptr) {
    return Status::Internal(std::string("crypt_gensalt_rn: ") + strerror(errno));
  }
  // crypt_data is about 32 KiB: on the heap, not on a front end's stack.
  auto data = std::make_unique<crypt_data>();
  const std::string text(password);
  const char* hash = crypt_r(text.c_str(), salt, data.get());
  // libxcrypt fails with a hash starting with '*' (or null).
  if (hash == nullptr || hash[0] == '*') {
    return Status::Internal(std::string("crypt_r: ") + strerror(errno));
  }
  return std::string(hash);
}

bool CheckPassword(std::string_view password, const std::string& hash) {
  if (hash.empty() || !Hashable(password)) return false;
  auto data = std::make_unique<crypt_data>();
  const std::string text(password);
  const char* computed = crypt_r(text.c_str(), hash.c_str(), data.get());
  if (computed == nullptr || computed[0] == '*') return false;
  // Both are as long as the hash; compare every byte (no early exit).
  const size_t n = strlen(computed);
  if (n != hash.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(computed[i] ^ hash[i]);
  return diff == 0;
}

}  // namespace natcd::auth
