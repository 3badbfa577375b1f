// SimpleTokens: etcd's "simple" auth tokens (--auth-token simple): random
// strings a member hands out on Authenticate and remembers, with the user
// each stands for, for a TTL that every use renews (etcd's
// simpleTokenTTLKeeper; --auth-token-ttl, 300 s by default). As etcd's,
// a token is "<16 random letters>.<index>" of the Authenticate log entry
// that every member applies (Assign), so every member knows it; each ages
// its own copy by the uses it sees, and a restart forgets them.
//
// Time: the injected clock's monotonic milliseconds.
//
// Thread safety: none; the member thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "natcd/clock.h"

namespace natcd::auth {

class SimpleTokens {
 public:
  SimpleTokens(Clock* clock, int64_t ttl_ms) : clock_(clock), ttl_ms_(ttl_ms) {}

  // A token's random part: 16 letters from the system's random source, so
  // tokens cannot be guessed (etcd's genTokenPrefix).
  static std::string NewPrefix();
  // Remembers "<prefix>.<index>" for user and returns it: index (the log
  // entry's) makes it unique, as etcd's assign.
  std::string Assign(const std::string& user, const std::string& prefix, uint64_t index);
  // The user the token stands for, renewing it; nullopt when unknown or
  // expired (it is forgotten then).
  std::optional<std::string> UserOf(const std::string& token);
  // Forgets every token of user (deleted, or its password changed).
  void RevokeUser(const std::string& user);
  // Forgets them all (auth disabled).
  void Clear() { tokens_.clear(); }
  // Drops expired tokens, a bounded number per call.
  void Prune(size_t max = 1'000);
  size_t size() const { return tokens_.size(); }

 private:
  struct Entry {
    std::string user;
    int64_t expires_ms = 0;
  };
  Clock* clock_;
  int64_t ttl_ms_;
  std::map<std::string, Entry> tokens_;
  std::string prune_from_;  // where the next Prune continues
};

}  // namespace natcd::auth
