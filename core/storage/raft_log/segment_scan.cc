#include "storage/raft_log/segment_scan.h"

#include <algorithm>

namespace natcd::raftlog {
namespace {

bool AllZero(std::string_view data, uint64_t from) {
  return std::all_of(data.begin() + static_cast<std::ptrdiff_t>(from), data.end(),
                     [](char c) { return c == 0; });
}

// Whether a valid record carrying kFlagPriorDurable starts anywhere after
// `bad`. Tried at every offset, as the bad record's length cannot be
// trusted to say where the next one is; an offset whose type byte is no
// record type (zeros, most garbage) is passed over before anything else.
bool DurableRecordAfter(std::string_view data, uint64_t bad) {
  constexpr uint8_t kFirstType = static_cast<uint8_t>(RecordType::kSegmentHeader);
  constexpr uint8_t kLastType = static_cast<uint8_t>(RecordType::kSnapshot);
  for (uint64_t p = bad + 1; p + kRecordHeaderBytes <= data.size(); p++) {
    uint8_t type = static_cast<uint8_t>(data[p + 8]);
    if (type < kFirstType || type > kLastType) continue;
    RecordView rec;
    if (ParseRecord(data, p, &rec) == ParseOutcome::kRecord &&
        (rec.flags & kFlagPriorDurable) != 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

SegmentScan ScanSegment(std::string_view data, bool last_segment) {
  SegmentScan scan;
  uint64_t offset = 0;
  while (true) {
    RecordView rec;
    ParseOutcome outcome = ParseRecord(data, offset, &rec);
    if (outcome == ParseOutcome::kRecord) {
      scan.records.push_back(rec);
      offset += rec.bytes;
      continue;
    }
    scan.end = offset;
    if (outcome == ParseOutcome::kZero && AllZero(data, offset)) {
      scan.how = SegmentScan::End::kClean;
    } else if (last_segment && !DurableRecordAfter(data, offset)) {
      scan.how = SegmentScan::End::kTorn;
    } else {
      scan.how = SegmentScan::End::kCorrupt;
    }
    return scan;
  }
}

}  // namespace natcd::raftlog
