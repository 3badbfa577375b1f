#include "storage/raft_log/raft_log_file.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "raft/storage.h"
#include "storage/raft_log/segment_scan.h"

namespace natcd::raftlog {
namespace {

// What a segment starts with, written when it is created: its header, the
// hard state and the snapshot marker. All three have fixed sizes, so a
// segment holding nothing else has exactly this many bytes of records.
constexpr uint64_t kSegmentStartBytes =
    (kRecordHeaderBytes + 8 + 4 + 8 + 8) + (kRecordHeaderBytes + 24) + (kRecordHeaderBytes + 16);
constexpr uint64_t kHardStateRecordBytes = kRecordHeaderBytes + 24;
// Smaller segments would rotate on nearly every append.
constexpr uint64_t kSegmentBytesMin = 1024;

constexpr std::string_view kTmpSuffix = ".tmp";

std::string Num(uint64_t v) { return std::to_string(v); }

std::string ParentDirectory(const std::string& path) {
  size_t slash = path.find_last_not_of('/');
  slash = slash == std::string::npos ? std::string::npos : path.rfind('/', slash);
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

RaftLogFile::~RaftLogFile() = default;

Result<std::unique_ptr<RaftLogFile>> RaftLogFile::Open(LogFs* fs, const std::string& dir,
                                                       const RaftLogOptions& options) {
  if (options.segment_bytes < kSegmentBytesMin) {
    return Status::InvalidArgument("ErrInvalidArgument",
                                   "raft log: segment_bytes " + Num(options.segment_bytes) +
                                       " is below the minimum " + Num(kSegmentBytesMin));
  }
  std::unique_ptr<RaftLogFile> log(new RaftLogFile(fs, dir, options));
  Status s = log->Load();
  if (!s.ok()) return s;
  return log;
}

Status RaftLogFile::Load() {
  Status s = fs_->CreateDir(dir_);
  if (!s.ok()) return s;
  Result<std::vector<std::string>> names = fs_->ListDir(dir_);
  if (!names.ok()) return names.status();
  std::vector<SegmentHeader> found;
  std::vector<std::string> leftovers;
  for (const std::string& name : names.value()) {
    if (std::optional<SegmentHeader> h = ParseSegmentFileName(name)) {
      found.push_back(*h);
    } else if (name == kSpareName ||
               (name.size() > kTmpSuffix.size() && name.ends_with(kTmpSuffix) &&
                ParseSegmentFileName(name.substr(0, name.size() - kTmpSuffix.size())))) {
      // A spare, or a segment half created by an older natcd.
      leftovers.push_back(name);
    }
  }
  std::sort(found.begin(), found.end(),
            [](const SegmentHeader& a, const SegmentHeader& b) { return a.seq < b.seq; });
  for (size_t i = 1; i < found.size(); i++) {
    if (found[i].seq != found[i - 1].seq + 1) {
      return Status::Corruption("raft log " + dir_ + ": segment " + Num(found[i - 1].seq + 1) +
                                " is missing between " + SegmentFileName(found[i - 1]) + " and " +
                                SegmentFileName(found[i]));
    }
  }
  for (size_t i = 0; i < found.size(); i++) {
    Segment seg;
    seg.header = found[i];
    seg.path = dir_ + "/" + SegmentFileName(found[i]);
    Result<std::unique_ptr<LogFile>> file = fs_->OpenFile(seg.path, false);
    if (!file.ok()) return file.status();
    seg.file = std::move(file).value();
    s = LoadSegment(&seg, i + 1 == found.size());
    if (!s.ok()) return s;
    segments_.push_back(std::move(seg));
  }
  if (!segments_.empty() && offset_ != snapshot_.index + 1) {
    return Status::Corruption("raft log " + dir_ + ": the log starts at index " + Num(offset_) +
                              " but the snapshot is at " + Num(snapshot_.index) +
                              ": the entries between are missing");
  }
  // Segments a crash left half created (never renamed into place) go now
  // that the log read back; before, an error must leave everything as it was.
  for (const std::string& name : leftovers) {
    s = fs_->Remove(dir_ + "/" + name);
    if (!s.ok()) return s;
  }
  if (segments_.empty()) {
    // A new log: its directory may be new too, and only a sync of the
    // directory holding it makes its name durable.
    s = CreateSegment(SegmentHeader{0, 1});
    if (s.ok()) s = fs_->SyncDir(ParentDirectory(dir_));
    return s;
  }
  if (!leftovers.empty()) {
    s = fs_->SyncDir(dir_);
    if (!s.ok()) return s;
  }
  spare_.Start();
  return Status::OK();
}

Status RaftLogFile::LoadSegment(Segment* seg, bool last) {
  Result<uint64_t> size = seg->file->Size();
  if (!size.ok()) return size.status();
  std::string data;
  Status s = seg->file->Read(0, size.value(), &data);
  if (!s.ok()) return s;
  SegmentScan scan = ScanSegment(data, last);
  const std::string where = "raft log: segment " + seg->path;
  if (scan.how == SegmentScan::End::kCorrupt) {
    return Status::Corruption(where + ": bad record at offset " + Num(scan.end));
  }
  SegmentHeader header;
  if (scan.records.empty() || scan.records[0].type != RecordType::kSegmentHeader ||
      !DecodeSegmentHeader(scan.records[0].payload, &header)) {
    return Status::Corruption(where + ": no segment header at offset 0");
  }
  if (header != seg->header) {
    return Status::Corruption(where + ": its header says seq " + Num(header.seq) +
                              " and first index " + Num(header.first_index));
  }
  if (segments_.empty()) {
    offset_ = header.first_index;
  } else if (header.first_index != LastIndex() + 1) {
    return Status::Corruption(where + ": starts at index " + Num(header.first_index) +
                              " but the log before it ends at " + Num(LastIndex()));
  }
  for (size_t i = 1; i < scan.records.size(); i++) {
    s = ApplyRecord(scan.records[i], header.seq);
    if (!s.ok()) {
      return Status::Corruption(where + ": record at offset " + Num(scan.records[i].offset) + ": " +
                                std::string(s.message()));
    }
  }
  if (!last) return Status::OK();
  write_offset_ = scan.end;
  allocated_ = size.value();
  if (scan.how == SegmentScan::End::kTorn) {
    uint64_t used = data.size();
    while (used > scan.end && data[used - 1] == 0) used--;
    torn_bytes_dropped_ = used - scan.end;
    // Cut the torn bytes off (zeros replace them) so that no part of them
    // is ever read as a record behind the new appends.
    s = seg->file->Truncate(scan.end);
    if (!s.ok()) return s;
    allocated_ = scan.end;
  }
  if (allocated_ < options_.segment_bytes) {
    s = seg->file->Preallocate(options_.segment_bytes);
    if (!s.ok()) return s;
    allocated_ = options_.segment_bytes;
  }
  // What was read may be in the page cache only (a process killed before
  // its fdatasync): make it durable, so later records may say so.
  s = seg->file->Sync();
  if (!s.ok()) return s;
  tail_durable_ = true;
  synced_end_ = written_end_ = write_offset_;
  return Status::OK();
}

Status RaftLogFile::ApplyRecord(const RecordView& rec, uint64_t seq) {
  switch (rec.type) {
    case RecordType::kSegmentHeader:
      return Status::Corruption("a second segment header");
    case RecordType::kEntries: {
      uint64_t first = 0;
      std::vector<EntryView> views;
      if (!DecodeEntries(rec.payload, &first, &views)) {
        return Status::Corruption("an entry batch that does not decode");
      }
      if (first > LastIndex() + 1) {
        return Status::Corruption("entries from index " + Num(first) +
                                  " leave a gap after the last index " + Num(LastIndex()));
      }
      ApplyEntries(first, views, seq, rec.offset, rec.bytes);
      return Status::OK();
    }
    case RecordType::kHardState:
      if (!DecodeHardState(rec.payload, &hard_state_)) {
        return Status::Corruption("a hard state that does not decode");
      }
      return Status::OK();
    case RecordType::kSnapshot: {
      SnapshotMarker marker;
      if (!DecodeSnapshot(rec.payload, &marker)) {
        return Status::Corruption("a snapshot marker that does not decode");
      }
      ApplySnapshot(marker);
      return Status::OK();
    }
  }
  return Status::Corruption("an unknown record type");
}

void RaftLogFile::ApplyEntries(uint64_t first, const std::vector<EntryView>& entries, uint64_t seq,
                               uint64_t record_offset, uint64_t record_bytes) {
  // The batch replaces everything from `first` on. Entries below offset_
  // occur only while reading back a log whose older segments were released:
  // a snapshot marker later in it covers them.
  if (first >= offset_) {
    entries_.resize(std::min<uint64_t>(entries_.size(), first - offset_));
  } else {
    entries_.clear();
  }
  for (size_t k = 0; k < entries.size(); k++) {
    if (first + k < offset_) continue;
    entries_.push_back(EntryLoc{entries[k].term, seq, record_offset, record_bytes});
  }
}

void RaftLogFile::ApplySnapshot(const SnapshotMarker& marker) {
  // Every segment repeats the marker it was created with: an older or
  // equal one changes nothing.
  if (marker.index <= snapshot_.index) return;
  snapshot_ = marker;
  // Reading back a log whose first kept segment starts after this marker:
  // a newer one must follow (Load checks that one did).
  if (marker.index + 1 < offset_) return;
  if (marker.index >= offset_ && marker.index <= LastIndex() &&
      entries_[marker.index - offset_].term == marker.term) {
    entries_.erase(entries_.begin(),
                   entries_.begin() + static_cast<std::ptrdiff_t>(marker.index - offset_ + 1));
  } else if (marker.index >= offset_) {
    // The log does not hold the snapshot's entry: the snapshot replaces it.
    entries_.clear();
  }
  offset_ = marker.index + 1;
}

Status RaftLogFile::CheckAppend(const std::vector<raft::Entry>& entries,
                                const std::optional<raft::HardState>& hs) const {
  auto invalid = [](const std::string& msg) {
    return Status::InvalidArgument("ErrInvalidArgument", "raft log: " + msg);
  };
  uint64_t new_last = LastIndex();
  if (!entries.empty()) {
    const uint64_t first = entries.front().index;
    for (size_t k = 1; k < entries.size(); k++) {
      if (entries[k].index != first + k) {
        return invalid("entries are not consecutive: index " + Num(entries[k].index) + " follows " +
                       Num(entries[k - 1].index));
      }
      if (entries[k].term < entries[k - 1].term) {
        return invalid("entry " + Num(entries[k].index) + " has term " + Num(entries[k].term) +
                       ", below the term " + Num(entries[k - 1].term) + " before it");
      }
    }
    if (first > LastIndex() + 1) {
      return invalid("entries from index " + Num(first) + " leave a gap after the last index " +
                     Num(LastIndex()));
    }
    if (first <= snapshot_.index) {
      return invalid("entries from index " + Num(first) +
                     " would replace entries the snapshot at " + Num(snapshot_.index) + " covers");
    }
    if (first <= hard_state_.commit) {
      return invalid("entries from index " + Num(first) +
                     " would replace committed entries (commit " + Num(hard_state_.commit) + ")");
    }
    Result<uint64_t> prev = Term(first - 1);
    if (prev.ok() && entries.front().term < prev.value()) {
      return invalid("entry " + Num(first) + " has term " + Num(entries.front().term) +
                     ", below the term " + Num(prev.value()) + " of the entry before it");
    }
    if (EntriesRecordBytes(entries) - kRecordHeaderBytes > kRecordPayloadMax) {
      return invalid("an entry batch of more than " + Num(kRecordPayloadMax) + " bytes");
    }
    new_last = entries.back().index;
  }
  if (hs) {
    if (hs->term < hard_state_.term) {
      return invalid("hard state term " + Num(hs->term) + " is below the term " +
                     Num(hard_state_.term) + " held");
    }
    if (hs->term == hard_state_.term && hard_state_.vote != raft::kNoNode &&
        hs->vote != hard_state_.vote) {
      return invalid("a second vote in term " + Num(hs->term) + ": " + Num(hs->vote) + " after " +
                     Num(hard_state_.vote));
    }
    if (hs->commit < hard_state_.commit) {
      return invalid("hard state commit " + Num(hs->commit) + " is below the commit " +
                     Num(hard_state_.commit) + " held");
    }
    if (hs->commit > new_last) {
      return invalid("hard state commit " + Num(hs->commit) + " is past the last index " +
                     Num(new_last));
    }
  }
  return Status::OK();
}

Status RaftLogFile::Append(const std::vector<raft::Entry>& entries,
                           const std::optional<raft::HardState>& hs, bool sync) {
  Status s = CheckHealthy();
  if (!s.ok()) return s;
  s = CheckAppend(entries, hs);
  if (!s.ok()) return s;
  if (entries.empty() && !hs) {
    if (!sync || tail_durable_) return Status::OK();
    s = segments_.back().file->Sync();
    if (!s.ok()) return Poison(s);
    tail_durable_ = true;
    synced_end_ = write_offset_;
    return Status::OK();
  }
  const uint64_t entries_bytes = entries.empty() ? 0 : EntriesRecordBytes(entries);
  const uint64_t bytes = entries_bytes + (hs ? kHardStateRecordBytes : 0);
  if (write_offset_ > kSegmentStartBytes && write_offset_ + bytes > options_.segment_bytes) {
    s = Rotate();
    if (!s.ok()) return s;
  }
  const uint64_t at = write_offset_;
  buf_.clear();
  uint8_t flags = tail_durable_ ? kFlagPriorDurable : 0;
  if (!entries.empty()) {
    AppendEntriesRecord(entries, flags, &buf_);
    flags = 0;
  }
  if (hs) AppendHardStateRecord(*hs, flags, &buf_);
  s = WriteRecords(sync);
  if (!s.ok()) return s;
  if (!entries.empty()) {
    std::vector<EntryView> views;
    views.reserve(entries.size());
    for (const raft::Entry& e : entries) views.push_back(EntryView{e.term, e.type, e.data});
    ApplyEntries(entries.front().index, views, segments_.back().header.seq, at, entries_bytes);
  }
  if (hs) hard_state_ = *hs;
  return Status::OK();
}

Status RaftLogFile::SaveSnapshot(const SnapshotMarker& marker) {
  Status s = CheckHealthy();
  if (!s.ok()) return s;
  if (marker.index < snapshot_.index ||
      (marker.index == snapshot_.index && marker.term != snapshot_.term)) {
    return Status::InvalidArgument("ErrInvalidArgument",
                                   "raft log: snapshot at index " + Num(marker.index) + " term " +
                                       Num(marker.term) + " is older than the one held (index " +
                                       Num(snapshot_.index) + " term " + Num(snapshot_.term) + ")");
  }
  if (marker == snapshot_) return Status::OK();
  const uint64_t bytes = kRecordHeaderBytes + 16;
  if (write_offset_ > kSegmentStartBytes && write_offset_ + bytes > options_.segment_bytes) {
    s = Rotate();
    if (!s.ok()) return s;
  }
  buf_.clear();
  AppendSnapshotRecord(marker, tail_durable_ ? kFlagPriorDurable : 0, &buf_);
  s = WriteRecords(true);
  if (!s.ok()) return s;
  ApplySnapshot(marker);
  return Status::OK();
}

Status RaftLogFile::WriteRecords(bool sync) {
  Segment& seg = segments_.back();
  const uint64_t end = write_offset_ + buf_.size();
  if (end > allocated_) {
    // Only a batch larger than a segment gets here: room for it and a
    // segment's worth after.
    uint64_t want = end + options_.segment_bytes;
    Status s = seg.file->Preallocate(want);
    if (!s.ok()) return Poison(s);
    allocated_ = want;
  }
  written_end_ = std::max(written_end_, end);  // a failed write may have written part
  Status s = seg.file->Write(write_offset_, buf_);
  if (!s.ok()) return Poison(s);
  if (sync) {
    s = seg.file->Sync();
    if (!s.ok()) return Poison(s);
    synced_end_ = end;
  }
  write_offset_ = end;
  tail_durable_ = sync;
  return Status::OK();
}

Status RaftLogFile::Rotate() {
  if (!tail_durable_) {
    Status s = segments_.back().file->Sync();
    if (!s.ok()) return Poison(s);
    tail_durable_ = true;
    synced_end_ = write_offset_;
  }
  Status s = CreateSegment(SegmentHeader{segments_.back().header.seq + 1, LastIndex() + 1});
  if (!s.ok()) return Poison(s);
  return Status::OK();
}

Status RaftLogFile::CreateSegment(const SegmentHeader& header) {
  Segment seg;
  seg.header = header;
  seg.path = dir_ + "/" + SegmentFileName(header);
  Result<std::unique_ptr<LogFile>> file = spare_.Take();
  if (!file.ok()) return file.status();
  seg.file = std::move(file).value();
  std::string start;
  AppendSegmentHeaderRecord(header, kFlagPriorDurable, &start);
  AppendHardStateRecord(hard_state_, 0, &start);
  AppendSnapshotRecord(snapshot_, 0, &start);
  Status s = seg.file->Write(0, start);
  if (s.ok()) s = seg.file->Sync();
  if (s.ok()) s = fs_->Rename(spare_.path(), seg.path);
  if (s.ok()) s = fs_->SyncDir(dir_);
  if (!s.ok()) return s;
  spare_.Start();
  segments_.push_back(std::move(seg));
  write_offset_ = start.size();
  allocated_ = options_.segment_bytes;
  tail_durable_ = true;
  synced_end_ = written_end_ = write_offset_;
  return Status::OK();
}

Status RaftLogFile::DiscardUnsynced() {
  if (segments_.empty() || written_end_ <= synced_end_) return Status::OK();
  LogFile& file = *segments_.back().file;
  Status s = file.Write(synced_end_, std::string(written_end_ - synced_end_, '\0'));
  if (s.ok()) s = file.Sync();
  if (s.ok()) written_end_ = synced_end_;
  return s;
}

Status RaftLogFile::ReleaseTo(uint64_t index) {
  Status s = CheckHealthy();
  if (!s.ok()) return s;
  if (index > snapshot_.index) {
    return Status::InvalidArgument("ErrInvalidArgument",
                                   "raft log: release to index " + Num(index) +
                                       " is past the snapshot at " + Num(snapshot_.index));
  }
  size_t n = 0;
  while (n + 1 < segments_.size() && segments_[n + 1].header.first_index - 1 <= index) n++;
  if (n == 0) return Status::OK();
  // Oldest first: a crash part way leaves the newer segments, contiguous.
  size_t removed = 0;
  for (; removed < n && s.ok(); removed++) {
    segments_[removed].file.reset();
    s = fs_->Remove(segments_[removed].path);
  }
  segments_.erase(segments_.begin(), segments_.begin() + static_cast<std::ptrdiff_t>(removed));
  if (s.ok()) s = fs_->SyncDir(dir_);
  if (!s.ok()) return Poison(s);
  return Status::OK();
}

Result<uint64_t> RaftLogFile::Term(uint64_t i) const {
  if (i + 1 == offset_ && i == snapshot_.index) return snapshot_.term;
  if (i < offset_) return raft::ErrLogCompacted();
  if (i > LastIndex()) return raft::ErrLogUnavailable();
  return entries_[i - offset_].term;
}

Result<std::vector<raft::Entry>> RaftLogFile::Entries(uint64_t lo, uint64_t hi,
                                                      uint64_t max_bytes) const {
  if (lo > hi) {
    return Status::InvalidArgument(
        "ErrInvalidArgument", "raft log: entries [" + Num(lo) + ", " + Num(hi) + ") is no range");
  }
  if (lo < offset_) return raft::ErrLogCompacted();
  if (hi > LastIndex() + 1) return raft::ErrLogUnavailable();
  std::vector<raft::Entry> out;
  std::string record;
  std::vector<EntryView> views;
  uint64_t bytes = 0;
  uint64_t i = lo;
  while (i < hi) {
    const EntryLoc& loc = entries_[i - offset_];
    const Segment* seg = FindSegment(loc.seq);
    if (seg == nullptr) return Status::Internal("raft log: entry in a released segment");
    Status s = seg->file->Read(loc.record_offset, loc.record_bytes, &record);
    if (!s.ok()) return s;
    RecordView rec;
    uint64_t first = 0;
    if (ParseRecord(record, 0, &rec) != ParseOutcome::kRecord || rec.type != RecordType::kEntries ||
        !DecodeEntries(rec.payload, &first, &views) || i < first || i - first >= views.size()) {
      return Status::Corruption("raft log: segment " + seg->path + ": record at offset " +
                                Num(loc.record_offset) + " no longer reads back");
    }
    // Every entry still taken from this record, in one read of it.
    while (i < hi) {
      const EntryLoc& at = entries_[i - offset_];
      if (at.seq != loc.seq || at.record_offset != loc.record_offset) break;
      const EntryView& e = views[i - first];
      if (!out.empty() && bytes + e.data.size() > max_bytes) return out;
      bytes += e.data.size();
      out.push_back(raft::Entry{e.term, i, e.type, std::string(e.data)});
      i++;
    }
  }
  return out;
}

const RaftLogFile::Segment* RaftLogFile::FindSegment(uint64_t seq) const {
  if (segments_.empty() || seq < segments_.front().header.seq) return nullptr;
  uint64_t k = seq - segments_.front().header.seq;
  return k < segments_.size() ? &segments_[k] : nullptr;
}

std::vector<std::string> RaftLogFile::SegmentNames() const {
  std::vector<std::string> names;
  for (const Segment& seg : segments_) names.push_back(SegmentFileName(seg.header));
  return names;
}

Status RaftLogFile::Poison(Status s) {
  if (poisoned_.ok()) poisoned_ = s;
  return s;
}

Status RaftLogFile::CheckHealthy() const {
  if (poisoned_.ok()) return Status::OK();
  return Status::IOError("raft log " + dir_ +
                         " failed earlier and must be reopened: " + poisoned_.ToString());
}

}  // namespace natcd::raftlog
