// Helpers of the Raft log file's tests: entries to append, the files of a
// log directory, and reading a whole log back for comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "raft/types.h"
#include "storage/raft_log/raft_log_file.h"
#include "testutil.h"

namespace natcd::raftlog::testing {

// Entries first..first+n-1 of term `term`, each with data naming it.
inline std::vector<raft::Entry> MakeEntries(uint64_t first, uint64_t n, uint64_t term,
                                            size_t data_bytes = 8) {
  std::vector<raft::Entry> out;
  for (uint64_t i = first; i < first + n; i++) {
    std::string data = "e" + std::to_string(i) + "t" + std::to_string(term) + ":";
    while (data.size() < data_bytes)
      data.push_back(static_cast<char>('a' + (i + data.size()) % 26));
    out.push_back(raft::Entry{term, i, raft::EntryType::kNormal, data});
  }
  return out;
}

inline std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteWhole(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// The segment files of dir, sorted (creation order).
inline std::vector<std::string> SegmentPaths(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".wal") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every entry the log holds.
inline std::vector<raft::Entry> AllEntries(const RaftLogFile& log) {
  Result<std::vector<raft::Entry>> r = log.Entries(log.FirstIndex(), log.LastIndex() + 1);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r.value() : std::vector<raft::Entry>{};
}

}  // namespace natcd::raftlog::testing
