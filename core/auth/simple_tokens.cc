#include "auth/simple_tokens.h"

#include <sys/random.h>

#include <array>
#include <iterator>

namespace natcd::auth {
namespace {

constexpr size_t kTokenLetters = 16;  // etcd's defaultSimpleTokenLength

// Letters from getrandom(2) (blocking only before the kernel's pool is
// seeded, at boot), by rejection so that each letter is uniform.
std::string RandomLetters(size_t n) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  constexpr unsigned kCount = sizeof kLetters - 1;  // 52
  std::string out;
  while (out.size() < n) {
    std::array<unsigned char, 32> bytes;
    if (getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) continue;
    for (unsigned char b : bytes) {
      if (b < 4 * kCount && out.size() < n) out.push_back(kLetters[b % kCount]);  // 208 of 256
    }
  }
  return out;
}

}  // namespace

std::string SimpleTokens::NewPrefix() { return RandomLetters(kTokenLetters); }

std::string SimpleTokens::Assign(const std::string& user, const std::string& prefix,
                                 uint64_t index) {
  std::string token = prefix + "." + std::to_string(index);
  tokens_[token] = Entry{user, clock_->MonotonicMs() + ttl_ms_};
  return token;
}

std::optional<std::string> SimpleTokens::UserOf(const std::string& token) {
  auto it = tokens_.find(token);
  if (it == tokens_.end()) return std::nullopt;
  const int64_t now = clock_->MonotonicMs();
  if (it->second.expires_ms <= now) {
    tokens_.erase(it);
    return std::nullopt;
  }
  it->second.expires_ms = now + ttl_ms_;
  return it->second.user;
}

void SimpleTokens::RevokeUser(const std::string& user) {
  for (auto it = tokens_.begin(); it != tokens_.end();) {
    it = it->second.user == user ? tokens_.erase(it) : std::next(it);
  }
}

void SimpleTokens::Prune(size_t max) {
  const int64_t now = clock_->MonotonicMs();
  auto it = tokens_.lower_bound(prune_from_);
  for (size_t n = 0; n < max; ++n) {
    if (it == tokens_.end()) {
      it = tokens_.begin();
      if (it == tokens_.end()) break;
    }
    it = it->second.expires_ms <= now ? tokens_.erase(it) : std::next(it);
  }
  prune_from_ = it == tokens_.end() ? std::string() : it->first;
}

}  // namespace natcd::auth
