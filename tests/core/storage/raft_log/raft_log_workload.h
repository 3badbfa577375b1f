// A seeded stream of operations a Raft member could make on its log
// (appends that follow Raft's rules, some replacing an uncommitted suffix,
// with and without hard states and syncs; snapshots; releases; reopens),
// and a plain in-memory model of what the log must hold after them: the
// "dumb alternative" the randomized, fault and crash tests compare with.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "raft/types.h"
#include "storage/raft_log/log_format.h"
#include "storage/raft_log/raft_log_file.h"

namespace natcd::raftlog::testing {

struct LogOp {
  enum class Kind { kAppend, kSnapshot, kRelease, kReopen };
  Kind kind = Kind::kAppend;
  std::vector<raft::Entry> entries;
  std::optional<raft::HardState> hard_state;
  bool sync = true;
  SnapshotMarker marker;
  uint64_t release_to = 0;
};

struct LogModel {
  uint64_t offset = 1;  // entries[k] is index offset + k
  std::vector<raft::Entry> entries;
  raft::HardState hard_state;
  SnapshotMarker snapshot;

  uint64_t last() const { return offset + entries.size() - 1; }
  uint64_t term(uint64_t i) const {
    return i + 1 == offset ? snapshot.term : entries[i - offset].term;
  }
  bool operator==(const LogModel&) const = default;

  // Only the entries of an Append (its hard state record lost).
  void ApplyEntries(const LogOp& op) {
    if (op.kind != LogOp::Kind::kAppend || op.entries.empty()) return;
    entries.resize(op.entries.front().index - offset);
    entries.insert(entries.end(), op.entries.begin(), op.entries.end());
  }
  void Apply(const LogOp& op) {
    if (op.kind == LogOp::Kind::kAppend) {
      ApplyEntries(op);
      if (op.hard_state) hard_state = *op.hard_state;
    } else if (op.kind == LogOp::Kind::kSnapshot && !(op.marker == snapshot)) {
      const SnapshotMarker& m = op.marker;
      if (m.index >= offset && m.index <= last() && term(m.index) == m.term) {
        entries.erase(entries.begin(), entries.begin() + static_cast<long>(m.index - offset + 1));
      } else {
        entries.clear();
      }
      offset = m.index + 1;
      snapshot = m;
    }
  }
};

// What the log holds, read through its API, as a model to compare.
inline LogModel Observe(const RaftLogFile& log) {
  LogModel m;
  m.offset = log.FirstIndex();
  Result<std::vector<raft::Entry>> all = log.Entries(log.FirstIndex(), log.LastIndex() + 1);
  if (all.ok()) m.entries = all.value();
  m.hard_state = log.hard_state();
  m.snapshot = log.snapshot();
  return m;
}

// The next operation, valid for a log in state m.
inline LogOp NextOp(const LogModel& m, std::mt19937* rng, bool allow_reopen = true,
                    size_t data_bytes_max = 120) {
  auto pick = [rng](uint64_t lo, uint64_t hi) { return lo + (*rng)() % (hi - lo + 1); };
  LogOp op;
  uint32_t r = (*rng)() % 100;
  if (r < 76) {
    op.kind = LogOp::Kind::kAppend;
    const uint64_t lo = std::max(m.hard_state.commit, m.snapshot.index) + 1;
    const uint64_t hi = m.last() + 1;
    // Mostly at the end; sometimes replacing an uncommitted suffix.
    uint64_t first = (lo < hi && (*rng)() % 4 == 0) ? pick(lo, hi - 1) : hi;
    uint64_t term = std::max(m.term(first - 1), m.hard_state.term);
    if (first <= m.last()) term = std::max(term, m.term(m.last())) + 1;
    uint64_t n = (*rng)() % 6 == 0 ? 0 : pick(1, 8);
    for (uint64_t i = 0; i < n; i++) {
      std::string data(pick(0, data_bytes_max), '\0');
      for (char& c : data) c = static_cast<char>((*rng)());
      raft::EntryType type =
          (*rng)() % 10 == 0 ? raft::EntryType::kConfChange : raft::EntryType::kNormal;
      op.entries.push_back(raft::Entry{term, first + i, type, std::move(data)});
    }
    const uint64_t new_last = n == 0 ? m.last() : first + n - 1;
    if (n == 0 || (*rng)() % 3 != 0) {
      raft::HardState hs = m.hard_state;
      uint64_t t = std::max(hs.term, n == 0 ? hs.term : term) + ((*rng)() % 4 == 0 ? 1 : 0);
      if (t != hs.term) {
        hs.term = t;  // a new term: any vote, or none yet
        hs.vote = pick(0, 3);
      } else if (hs.vote == raft::kNoNode) {
        hs.vote = pick(0, 3);  // the first vote of this term
      }
      if (new_last > hs.commit) hs.commit = pick(hs.commit, new_last);
      op.hard_state = hs;
    }
    op.sync = (*rng)() % 4 != 0;
  } else if (r < 86) {
    op.kind = LogOp::Kind::kSnapshot;
    if (m.hard_state.commit > m.snapshot.index && (*rng)() % 4 != 0) {
      uint64_t i = pick(m.snapshot.index + 1, m.hard_state.commit);
      op.marker = SnapshotMarker{i, m.term(i)};
    } else {
      // A leader's snapshot, past this log.
      uint64_t i = m.last() + pick(1, 5);
      op.marker = SnapshotMarker{i, std::max(m.hard_state.term, m.term(m.last())) + 1};
    }
  } else if (r < 95 || !allow_reopen) {
    op.kind = LogOp::Kind::kRelease;
    op.release_to = pick(0, m.snapshot.index);
  } else {
    op.kind = LogOp::Kind::kReopen;
  }
  return op;
}

// Runs op against the log (kReopen excepted: the caller reopens).
inline Status RunOp(RaftLogFile* log, const LogOp& op) {
  switch (op.kind) {
    case LogOp::Kind::kAppend:
      return log->Append(op.entries, op.hard_state, op.sync);
    case LogOp::Kind::kSnapshot:
      return log->SaveSnapshot(op.marker);
    case LogOp::Kind::kRelease:
      return log->ReleaseTo(op.release_to);
    case LogOp::Kind::kReopen:
      break;
  }
  return Status::OK();
}

}  // namespace natcd::raftlog::testing
