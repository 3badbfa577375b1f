// Key ranges as etcd spells them: [key, range_end) where an empty range_end
// means the key alone and range_end "\0" means every key >= key.
#pragma once

#include <string>
#include <string_view>

namespace natcd {

inline bool KeyInRange(std::string_view k, std::string_view key, std::string_view range_end) {
  if (range_end.empty()) return k == key;
  if (k < key) return false;
  if (range_end == std::string_view("\0", 1)) return true;
  return k < range_end;
}

// The range_end that selects every key starting with prefix (etcd's
// GetPrefixRangeEnd): the prefix with its last byte below 0xff incremented
// and what follows dropped; "\0" (every key) when there is no such byte.
inline std::string PrefixRangeEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    unsigned char last = static_cast<unsigned char>(end.back());
    if (last < 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string("\0", 1);
}

}  // namespace natcd
