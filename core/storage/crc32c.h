// CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected), the checksum of
// iSCSI, ext4 and leveldb. natcd uses it to check files it ships between
// members (a database snapshot) chunk by chunk and whole: it finds every
// burst error up to 32 bits and random damage with probability 1 - 2^-32,
// needs no library, and runs at memory speed (slicing-by-8 tables).
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace natcd {

// The CRC-32C of the bytes already covered by crc (0 for none), extended
// with n more bytes: Crc32cExtend(Crc32c(a), b, n) == Crc32c(a + b), so a
// file can be checked piece by piece in order.
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n);

inline uint32_t Crc32c(std::string_view bytes) {
  return Crc32cExtend(0, bytes.data(), bytes.size());
}

}  // namespace natcd
