// Reading a segment's bytes back as records, and deciding what a record
// that does not parse means.
//
// A crash can cut short only writes that had not been made durable: the
// unsynced end of the last segment. There a bad record (short, a length
// past the end, a checksum mismatch, garbage after a zero header) is a
// torn tail: it and everything after it are dropped. A bad record is
// instead damage to durable data, refused as Corruption, when
//   - it is in a segment that is not the last (a segment is made durable
//     before the next one is created), or
//   - a valid record after it carries kFlagPriorDurable: that record was
//     written after everything before it, the bad bytes included, had
//     been synced, so no crash can explain them.
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "storage/raft_log/log_format.h"

namespace natcd::raftlog {

struct SegmentScan {
  enum class End {
    kClean,    // the records end at a zero header (or the file's end)
    kTorn,     // a torn tail starts at `end`: drop it
    kCorrupt,  // a bad record at `end` that a crash cannot explain
  };
  std::vector<RecordView> records;  // the valid records before `end`, in order
  uint64_t end = 0;                 // offset just after the last valid record
  End how = End::kClean;
};

// Scans data (a whole segment). last_segment: whether it is the log's
// last, the only one that may have a torn tail.
SegmentScan ScanSegment(std::string_view data, bool last_segment);

}  // namespace natcd::raftlog
