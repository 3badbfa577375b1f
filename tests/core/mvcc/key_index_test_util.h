// Helpers for the KeyEntry/KeyHash/KeyTree/KeyIndex tests: entries owned
// by a pool, and random keys drawn from a small alphabet (so that keys share
// prefixes, one is often a prefix of another, and bytes 0x00 and 0xff sort
// at both ends as std::string orders them).
#pragma once

#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "mvcc/key_entry.h"

namespace natcd::testing {

class EntryPool {
 public:
  KeyEntry* Make(std::string_view key) {
    entries_.emplace_back(KeyEntry::New(key));
    return entries_.back().get();
  }

 private:
  struct Deleter {
    void operator()(KeyEntry* entry) const { KeyEntry::Delete(entry); }
  };
  std::vector<std::unique_ptr<KeyEntry, Deleter>> entries_;
};

inline std::string RandomKey(std::mt19937_64& rng, size_t max_size) {
  static constexpr char kAlphabet[] = {'\0', '\x01', '/', 'a', 'b', 'z', '\x7f', '\x80', '\xff'};
  std::string key(rng() % (max_size + 1), '\0');
  for (char& c : key) c = kAlphabet[rng() % sizeof(kAlphabet)];
  return key;
}

}  // namespace natcd::testing
