// ProposedCommands (server/proposed_commands.h): a kept command is
// handed out only for the entry at its index with its term.

#include "server/proposed_commands.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace natcd::server {
namespace {

LogCommand Command(uint64_t seq) {
  LogCommand c;
  c.request = PutRequest{"/k" + std::to_string(seq), "v", 0};
  c.origin_member = 7;
  c.origin_seq = seq;
  return c;
}

std::vector<LogCommand> Commands(uint64_t first_seq, size_t count) {
  std::vector<LogCommand> out;
  for (size_t i = 0; i < count; ++i) out.push_back(Command(first_seq + i));
  return out;
}

TEST(ProposedCommandsTest, TakesEachCommandAtItsIndexAndTermOnce) {
  ProposedCommands kept;
  kept.Add(10, 3, Commands(100, 3));
  kept.Add(13, 3, Commands(103, 2));  // follows on: kept with the first batch
  ASSERT_EQ(kept.size(), 5u);
  for (uint64_t i = 0; i < 5; ++i) {
    std::optional<LogCommand> c = kept.Take(10 + i, 3);
    ASSERT_TRUE(c.has_value()) << i;
    EXPECT_EQ(c->origin_seq, 100 + i);
    EXPECT_EQ(std::get<PutRequest>(c->request).key, "/k" + std::to_string(100 + i));
  }
  EXPECT_EQ(kept.size(), 0u);
  EXPECT_FALSE(kept.Take(14, 3).has_value());
}

TEST(ProposedCommandsTest, AnotherTermAtTheSameIndexIsNotTheProposal) {
  ProposedCommands kept;
  kept.Add(10, 3, Commands(100, 2));
  // A new leader replaced index 10 with its own entry: decode that one.
  EXPECT_FALSE(kept.Take(10, 4).has_value());
  // Each index is judged on its own: 11 still holds the proposal.
  std::optional<LogCommand> c = kept.Take(11, 3);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->origin_seq, 101u);
}

TEST(ProposedCommandsTest, EntriesBeforeTheKeptOnesAndSkippedOnesAreDecoded) {
  ProposedCommands kept;
  kept.Add(10, 3, Commands(100, 4));
  EXPECT_FALSE(kept.Take(9, 3).has_value());  // not proposed here
  EXPECT_EQ(kept.size(), 4u);
  // Applying index 12 first forgets 10 and 11 (applied in order: never again).
  std::optional<LogCommand> c = kept.Take(12, 3);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->origin_seq, 102u);
  EXPECT_EQ(kept.size(), 1u);
  EXPECT_FALSE(kept.Take(10, 3).has_value());
}

TEST(ProposedCommandsTest, ABatchThatDoesNotFollowReplacesWhatWasKept) {
  ProposedCommands kept;
  kept.Add(10, 3, Commands(100, 2));
  kept.Add(20, 5, Commands(200, 1));  // a gap: entries 12..19 were not kept
  EXPECT_EQ(kept.size(), 1u);
  EXPECT_FALSE(kept.Take(10, 3).has_value());
  std::optional<LogCommand> c = kept.Take(20, 5);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->origin_seq, 200u);
  kept.Add(30, 5, Commands(300, 2));
  kept.Clear();
  EXPECT_FALSE(kept.Take(30, 5).has_value());
}

}  // namespace
}  // namespace natcd::server
