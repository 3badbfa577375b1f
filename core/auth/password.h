// Password hashes: bcrypt ("$2b$", the hash etcd stores) through libxcrypt
// (Debian's libcrypt, crypt_r and crypt_gensalt_rn), salted from the
// system's random source.
//
// Hashing and checking take as long as the cost asks (cost 10, etcd's
// default, is about 0.1 s on one core): call them on a front end's thread,
// never on the member thread, where they would stall Raft.
//
// Thread safety: pure functions (crypt_r keeps its state on the stack).
#pragma once

#include <string>
#include <string_view>

#include "natcd/status.h"

namespace natcd::auth {

// etcd's --bcrypt-cost default (bcrypt.DefaultCost).
inline constexpr int kBcryptCostDefault = 10;
// The costs bcrypt takes (bcrypt.MinCost, bcrypt.MaxCost).
inline constexpr int kBcryptCostMin = 4;
inline constexpr int kBcryptCostMax = 31;

// A new "$2b$<cost>$<salt><hash>" for password. Internal error only when
// libcrypt fails (no random source).
Result<std::string> HashPassword(std::string_view password, int cost = kBcryptCostDefault);

// Whether password matches hash (a string HashPassword made). False for an
// empty or malformed hash.
bool CheckPassword(std::string_view password, const std::string& hash);

}  // namespace natcd::auth
