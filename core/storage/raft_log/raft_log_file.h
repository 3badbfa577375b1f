// RaftLogFile: a member's Raft log and hard state in a directory of
// append-only, preallocated, checksummed segment files of natcd's own
// (log_format.h). The models are leveldb's log format and etcd's wal
// package. The member uses it through raft/durable_raft_storage.h.
//
// Writes. Append(entries, hard_state, sync) is one Raft Ready: its entry
// batch and hard state become records written with one write and made
// durable with one fdatasync. An entry batch at index i <= LastIndex()
// replaces the entries from i on (Raft's conflicting suffix): the log is
// append-only, and on reading it back a batch at i cuts what came before
// it after i - 1, so the overwrite is durable exactly when the batch is.
// SaveSnapshot records that the state machine's snapshot is at an index:
// the log then starts after it. ReleaseTo deletes whole segments whose
// every entry is at or below an index a snapshot covers.
//
// Segments. A segment is rotated once it holds segment_bytes (a batch
// never spans two): the old one is synced, the new one is written into
// the spare (a zero-filled, synced file under a temporary name,
// spare_segment.h): its header with its first index, then the hard state
// and snapshot marker so far, so that no older segment is needed for
// them; it is synced, renamed into place and the directory synced. Created,
// renamed and deleted names are made durable by syncing the directory.
//
// Open reads every segment, checks every record's checksum and rebuilds
// the log: the entries after the newest snapshot marker and the newest
// hard state. A torn tail of the last segment (what a crash during an
// unsynced write leaves) is dropped and the file truncated there;
// anything else that does not read back -- a bad record in the middle, a
// missing segment, entries that do not follow on -- is Corruption naming
// the segment and offset, and nothing is changed (segment_scan.h).
//
// Errors. Bad arguments are InvalidArgument and change nothing. A failed
// write, fdatasync, truncate, rename or remove poisons the log: that
// call and every later write return IOError (the first error's text), as
// the file's state on disk is then unknown (a failed fdatasync may have
// dropped the dirty pages); the caller reopens. Reads go on working.
//
// Entries are read from the segment files (each record's checksum checked
// again); the log keeps only each entry's term and where its record is.
//
// Thread safety: none; one thread at a time (the member's Ready loop).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "natcd/status.h"
#include "raft/types.h"
#include "storage/raft_log/log_format.h"
#include "storage/raft_log/log_fs.h"
#include "storage/raft_log/spare_segment.h"

namespace natcd::raftlog {

struct RaftLogOptions {
  // A segment is rotated once it holds this many bytes; also how much is
  // preallocated for each. etcd's SegmentSizeBytes.
  uint64_t segment_bytes = 64ull << 20;
  // Whether the next segment's file is zero-filled on a thread of its own
  // while the current one fills (spare_segment.h); false: at rotation, on
  // the caller's thread. Needs a LogFs that allows a second thread.
  bool prepare_in_background = false;
};

class RaftLogFile {
 public:
  // Opens the log in dir (created if missing; a new log starts with an
  // empty segment whose first index is 1, and dir's parent is synced so
  // that dir's name is durable too). fs must outlive the log.
  // Corruption as above; IOError.
  static Result<std::unique_ptr<RaftLogFile>> Open(LogFs* fs, const std::string& dir,
                                                   const RaftLogOptions& options = {});
  ~RaftLogFile();
  RaftLogFile(const RaftLogFile&) = delete;
  RaftLogFile& operator=(const RaftLogFile&) = delete;

  // One Ready: entries (consecutive indexes, non-decreasing terms, the
  // first at most LastIndex() + 1, above the snapshot and above the
  // commit index held, terms not below the entry before it) and then, if
  // given, the hard state (term not decreasing, no second vote in a term,
  // commit not decreasing and at most the last index after the entries),
  // in one write; one fdatasync when sync is true. When it returns OK the
  // records are in the file, and on disk if sync. InvalidArgument and
  // nothing written for bad input; IOError (and poisoned) on a failed
  // write or sync.
  Status Append(const std::vector<raft::Entry>& entries,
                const std::optional<raft::HardState>& hard_state, bool sync);

  // The state machine's snapshot is at marker (index not below the one
  // held; the same index only with the same term). Entries up to it are
  // dropped; if the log does not hold marker.index with marker.term, all
  // of it is (a snapshot received from the leader replaces the log). The
  // next Append must then start at or below LastIndex() + 1 as usual,
  // LastIndex() being marker.index when the log was replaced. Synced.
  Status SaveSnapshot(const SnapshotMarker& marker);

  // Deletes the segments every entry of which is at or below index, which
  // must not be above the snapshot (InvalidArgument). The last segment is
  // never deleted. The directory is synced after.
  Status ReleaseTo(uint64_t index);

  // Entries [lo, hi), FirstIndex() <= lo <= hi <= LastIndex() + 1, at
  // least one (when lo < hi) and at most max_bytes of data in all (as
  // raft::Storage's Entries). ErrLogCompacted below FirstIndex(),
  // ErrLogUnavailable past LastIndex() + 1; Corruption if a record no
  // longer reads back; IOError.
  Result<std::vector<raft::Entry>> Entries(uint64_t lo, uint64_t hi,
                                           uint64_t max_bytes = UINT64_MAX) const;
  // The term of entry i, FirstIndex() - 1 <= i <= LastIndex() (the entry
  // before the first is the snapshot's).
  Result<uint64_t> Term(uint64_t i) const;

  // The first entry's index: the snapshot's index + 1.
  uint64_t FirstIndex() const { return offset_; }
  uint64_t LastIndex() const { return offset_ + entries_.size() - 1; }
  const raft::HardState& hard_state() const { return hard_state_; }
  const SnapshotMarker& snapshot() const { return snapshot_; }

  // The error that poisoned the log; OK while it is healthy.
  const Status& poisoned() const { return poisoned_; }
  // After a failed write or fdatasync: overwrites with zeros what the last
  // segment may hold past its last successful fdatasync, and syncs. Those
  // bytes may be in the page cache only (a failed fdatasync can leave their
  // pages clean without their reaching the disk), where reopening would
  // read them back, and the member trust them, as if durable; zeroed, the
  // log reopened holds only what is. OK at once when nothing is at risk.
  // The log stays poisoned: it is to be reopened.
  Status DiscardUnsynced();
  // Bytes of a torn tail Open dropped: from where the torn record starts
  // to the last byte that is not zero (the rest was preallocation). 0 if
  // there was no torn tail.
  uint64_t torn_bytes_dropped() const { return torn_bytes_dropped_; }
  // The segments' file names, oldest first.
  std::vector<std::string> SegmentNames() const;

 private:
  struct Segment {
    SegmentHeader header;
    std::string path;
    std::unique_ptr<LogFile> file;
  };
  // Where an entry is: its record, found again to read its data.
  struct EntryLoc {
    uint64_t term = 0;
    uint64_t seq = 0;            // its segment
    uint64_t record_offset = 0;  // its record in that segment
    uint64_t record_bytes = 0;
  };

  RaftLogFile(LogFs* fs, std::string dir, const RaftLogOptions& options)
      : fs_(fs),
        dir_(std::move(dir)),
        options_(options),
        spare_(fs, dir_ + "/" + std::string(kSpareName), options.segment_bytes,
               options.prepare_in_background) {}

  Status Load();
  Status LoadSegment(Segment* segment, bool last);
  // Applies a record read back from a segment (Open) or just written
  // (Append): the one path by which the log's state changes, so that
  // reopening rebuilds exactly what the writes built. Corruption when it
  // does not follow on from the log so far.
  Status ApplyRecord(const RecordView& rec, uint64_t seq);
  void ApplyEntries(uint64_t first, const std::vector<EntryView>& entries, uint64_t seq,
                    uint64_t record_offset, uint64_t record_bytes);
  void ApplySnapshot(const SnapshotMarker& marker);

  Status CheckAppend(const std::vector<raft::Entry>& entries,
                     const std::optional<raft::HardState>& hard_state) const;
  // Writes buf_ (records encoded with flags_) at the end of the last
  // segment, syncs if asked, then applies each record.
  Status WriteRecords(bool sync);
  Status Rotate();
  Status CreateSegment(const SegmentHeader& header);
  Status Poison(Status s);
  Status CheckHealthy() const;
  const Segment* FindSegment(uint64_t seq) const;

  LogFs* const fs_;
  const std::string dir_;
  const RaftLogOptions options_;
  SpareSegment spare_;

  // Invariant (after Open): segments_ is non-empty, seqs consecutive.
  std::vector<Segment> segments_;
  // entries_[k] is entry offset_ + k.
  // Invariant (after Open): offset_ == snapshot_.index + 1.
  std::deque<EntryLoc> entries_;
  uint64_t offset_ = 1;
  raft::HardState hard_state_;
  SnapshotMarker snapshot_;
  // The end of the last segment's records, and its preallocated size.
  uint64_t write_offset_ = 0;
  uint64_t allocated_ = 0;
  // Whether everything written so far has been synced.
  bool tail_durable_ = true;
  // The last segment: how far its last successful fdatasync covers, and
  // how far any write (one that failed too) may have reached.
  uint64_t synced_end_ = 0;
  uint64_t written_end_ = 0;
  Status poisoned_;
  uint64_t torn_bytes_dropped_ = 0;
  std::string buf_;  // Append's encoding buffer, kept for its capacity
};

}  // namespace natcd::raftlog
