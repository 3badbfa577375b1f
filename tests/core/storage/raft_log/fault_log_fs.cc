#include "core/storage/raft_log/fault_log_fs.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>

namespace natcd::raftlog::testing {
namespace {

class FaultLogFile final : public LogFile {
 public:
  FaultLogFile(FaultLogFs* fs, std::string path, std::unique_ptr<LogFile> base)
      : fs_(fs), path_(std::move(path)), base_(std::move(base)) {}

  Status Read(uint64_t offset, size_t n, std::string* out) override {
    return base_->Read(offset, n, out);
  }
  Status Write(uint64_t offset, std::string_view data) override {
    if (fs_->CrashesNow()) fs_->CrashMidWrite(base_.get(), offset, data);
    Status s = fs_->Enter(FsOp::kWrite, path_);
    if (!s.ok()) return s;
    s = base_->Write(offset, data);
    if (s.ok()) fs_->NoteWrite(path_, offset, data.size());
    return s;
  }
  Status Sync() override {
    Status s = fs_->Enter(FsOp::kSync, path_);
    if (!s.ok()) return s;
    s = base_->Sync();
    if (s.ok()) fs_->NoteSync(path_);
    return s;
  }
  Status Truncate(uint64_t size) override {
    Status s = fs_->Enter(FsOp::kTruncate, path_);
    if (!s.ok()) return s;
    s = base_->Truncate(size);
    if (s.ok()) fs_->NoteTruncate(path_, size);
    return s;
  }
  Status Preallocate(uint64_t size) override {
    Status s = fs_->Enter(FsOp::kPreallocate, path_);
    if (!s.ok()) return s;
    return base_->Preallocate(size);
  }
  Result<uint64_t> Size() override { return base_->Size(); }

 private:
  FaultLogFs* fs_;
  const std::string path_;
  std::unique_ptr<LogFile> base_;
};

}  // namespace

Status FaultLogFs::Enter(FsOp op, const std::string& path) {
  ++calls_;
  ++counts_[op];
  if (crash_at_ > 0 && calls_ == crash_at_) raise(SIGKILL);
  if (full_ && (op == FsOp::kWrite || op == FsOp::kPreallocate)) {
    return Status::IOError(std::string(op == FsOp::kWrite ? "write " : "fallocate ") + path +
                           ": No space left on device");
  }
  auto it = fail_.find(op);
  if (it != fail_.end() && it->second > 0 && --it->second == 0) {
    return Status::IOError("injected failure of call " + std::to_string(calls_) + " on " + path);
  }
  return Status::OK();
}

void FaultLogFs::CrashMidWrite(LogFile* file, uint64_t offset, std::string_view data) {
  // Any prefix, none to all but one byte: what reached the page cache.
  size_t n = data.empty() ? 0 : crash_rng_() % data.size();
  (void)file->Write(offset, data.substr(0, n));
  raise(SIGKILL);
  _exit(137);  // not reached
}

void FaultLogFs::NoteTruncate(const std::string& path, uint64_t size) {
  // A truncation is metadata fdatasync also writes; until then, treat the
  // cut as durable and the writes past it as gone.
  auto it = unsynced_.find(Resolve(path));
  if (it == unsynced_.end()) return;
  auto& runs = it->second;
  runs.erase(std::remove_if(runs.begin(), runs.end(), [&](auto& r) { return r.first >= size; }),
             runs.end());
  for (auto& r : runs) r.second = std::min(r.second, size - r.first);
}

uint64_t FaultLogFs::unsynced_bytes() const {
  uint64_t n = 0;
  for (const auto& [path, runs] : unsynced_) {
    for (const auto& r : runs) n += r.second;
  }
  return n;
}

void FaultLogFs::LosePower(std::mt19937* rng) {
  for (const auto& [path, runs] : unsynced_) {
    Result<std::unique_ptr<LogFile>> file = base_.OpenFile(path, false);
    if (!file.ok()) continue;  // renamed or removed since
    for (const auto& [offset, n] : runs) {
      // Whole, a prefix, or nothing of each run survives; zeros (the
      // preallocated blocks' contents) replace what does not.
      uint64_t keep = 0;
      switch ((*rng)() % 3) {
        case 0:
          keep = n;
          break;
        case 1:
          keep = n == 0 ? 0 : (*rng)() % n;
          break;
        default:
          keep = 0;
      }
      if (keep < n) (void)file.value()->Write(offset + keep, std::string(n - keep, '\0'));
    }
  }
  unsynced_.clear();
}

Result<std::unique_ptr<LogFile>> FaultLogFs::OpenFile(const std::string& path, bool create) {
  Status s = Enter(FsOp::kOpen, path);
  if (!s.ok()) return s;
  Result<std::unique_ptr<LogFile>> base = base_.OpenFile(path, create);
  if (!base.ok()) return base.status();
  return std::unique_ptr<LogFile>(
      std::make_unique<FaultLogFile>(this, path, std::move(base).value()));
}

Status FaultLogFs::Rename(const std::string& from, const std::string& to) {
  Status s = Enter(FsOp::kRename, from);
  if (!s.ok()) return s;
  s = base_.Rename(from, to);
  if (s.ok()) {
    renamed_.erase(to);
    renamed_[from] = to;
    auto it = unsynced_.find(from);
    if (it != unsynced_.end()) {
      unsynced_[to] = std::move(it->second);
      unsynced_.erase(from);
    }
  }
  return s;
}

Status FaultLogFs::Remove(const std::string& path) {
  Status s = Enter(FsOp::kRemove, path);
  if (!s.ok()) return s;
  s = base_.Remove(path);
  if (s.ok()) unsynced_.erase(path);
  return s;
}

Status FaultLogFs::SyncDir(const std::string& dir) {
  Status s = Enter(FsOp::kSyncDir, dir);
  if (!s.ok()) return s;
  return base_.SyncDir(dir);
}

}  // namespace natcd::raftlog::testing
