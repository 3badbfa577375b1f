// Helpers shared by natcd's C++ tests.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "natcd/status.h"

#define ASSERT_OK(expr)                                     \
  do {                                                      \
    const ::natcd::Status _s = (expr);                      \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s.ToString(); \
  } while (0)

#define EXPECT_OK(expr)                                     \
  do {                                                      \
    const ::natcd::Status _s = (expr);                      \
    EXPECT_TRUE(_s.ok()) << #expr << ": " << _s.ToString(); \
  } while (0)

namespace natcd::testing {

// A fresh directory under $TMPDIR, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "natcd-test-XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The seed of a randomized test: gtest's --gtest_random_seed when given,
// else a fixed one, so a failure replays exactly.
inline uint32_t RandomSeed() {
  // gtest makes up a time-based seed when the flag is not given: only an
  // explicit --gtest_random_seed=N changes ours.
  if (GTEST_FLAG_GET(random_seed) == 0) return 301;
  return static_cast<uint32_t>(::testing::UnitTest::GetInstance()->random_seed());
}

}  // namespace natcd::testing
