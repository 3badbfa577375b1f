// CRC-32C against published check values (RFC 3720 appendix B.4, and the
// "123456789" check value of the CRC catalogue), and piecewise extension
// agreeing with one pass at every split point and alignment.
#include "storage/crc32c.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace natcd {
namespace {

TEST(Crc32c, PublishedCheckValues) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; i++) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(descending), 0x113FDB5Cu);
}

// The 8-byte loop and the byte loop must agree wherever a piece starts.
TEST(Crc32c, ExtendingPieceByPieceEqualsOnePass) {
  std::mt19937 rng(11);
  std::string bytes(1000, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  const uint32_t whole = Crc32c(bytes);
  for (size_t split = 0; split <= bytes.size(); split += 7) {
    uint32_t crc = Crc32cExtend(0, bytes.data(), split);
    crc = Crc32cExtend(crc, bytes.data() + split, bytes.size() - split);
    EXPECT_EQ(crc, whole) << "split at " << split;
  }
  // Unaligned starts of the same content.
  for (size_t shift = 1; shift < 8; shift++) {
    std::string moved(shift, 'x');
    moved += bytes;
    EXPECT_EQ(Crc32cExtend(0, moved.data() + shift, bytes.size()), whole) << "shift " << shift;
  }
}

TEST(Crc32c, OneFlippedBitChangesIt) {
  std::string bytes(4096, 'a');
  const uint32_t before = Crc32c(bytes);
  for (size_t bit = 0; bit < bytes.size() * 8; bit += 61) {
    std::string damaged = bytes;
    damaged[bit / 8] = static_cast<char>(damaged[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_NE(Crc32c(damaged), before) << "bit " << bit;
  }
}

}  // namespace
}  // namespace natcd
