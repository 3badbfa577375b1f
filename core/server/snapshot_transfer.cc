#include "server/snapshot_transfer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>
#include <utility>

#include "storage/crc32c.h"
#include "storage/durable_file.h"

namespace natcd::server {
namespace {

Status Timeout(const std::string& msg) { return Status(Status::Code::kTimeout, "ErrTimeout", msg); }

// Reads exactly n bytes at offset; a file that ends early is an IOError
// (the snapshot file must not change while it is sent).
Status ReadFully(int fd, const std::string& what, uint64_t offset, char* out, size_t n) {
  while (n > 0) {
    ssize_t got = pread(fd, out, n, static_cast<off_t>(offset));
    if (got < 0) {
      int err = errno;
      if (err == EINTR) continue;
      return ErrnoStatus("read", what, err);
    }
    if (got == 0) return Status::IOError(what + " ended before " + std::to_string(offset + n));
    out += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<size_t>(got);
  }
  return Status::OK();
}

Status WriteFully(int fd, const std::string& what, uint64_t offset, const char* data, size_t n) {
  while (n > 0) {
    ssize_t put = pwrite(fd, data, n, static_cast<off_t>(offset));
    if (put < 0) {
      int err = errno;
      if (err == EINTR) continue;
      return ErrnoStatus("write", what, err);
    }
    data += put;
    offset += static_cast<uint64_t>(put);
    n -= static_cast<size_t>(put);
  }
  return Status::OK();
}

Status BadChunk(const SnapshotChunk& chunk, const std::string& why) {
  return Status::InvalidArgument(
      "ErrSnapshotMessage",
      "snapshot " + chunk.id.ToString() + " chunk at " + std::to_string(chunk.offset) + ": " + why);
}

// What a chunk must satisfy on its own, whatever the receiver's state.
Status CheckChunk(const SnapshotChunk& chunk, uint64_t total_bytes_max) {
  if (chunk.total_bytes > total_bytes_max) {
    return BadChunk(chunk, "announces " + std::to_string(chunk.total_bytes) +
                               " bytes, more than the limit of " + std::to_string(total_bytes_max));
  }
  if (chunk.offset > chunk.total_bytes || chunk.data.size() > chunk.total_bytes - chunk.offset) {
    return BadChunk(chunk, "extends past the total of " + std::to_string(chunk.total_bytes));
  }
  const bool ends_file = chunk.offset + chunk.data.size() == chunk.total_bytes;
  if (chunk.last != ends_file) return BadChunk(chunk, "last flag disagrees with the total");
  if (!chunk.last && chunk.data.empty()) return BadChunk(chunk, "empty and not the last");
  return Status::OK();
}

}  // namespace

// ---- SnapshotSender -------------------------------------------------------

Result<std::unique_ptr<SnapshotSender>> SnapshotSender::Open(const std::string& path,
                                                             const SnapshotId& id,
                                                             const SnapshotSenderOptions& options,
                                                             int64_t now_ms) {
  if (options.message_bytes_max <= kSnapshotChunkHeaderBytes ||
      options.message_bytes_max - kSnapshotChunkHeaderBytes >
          std::numeric_limits<uint32_t>::max()) {
    return Status::InvalidArgument("ErrConfig", "snapshot message_bytes_max " +
                                                    std::to_string(options.message_bytes_max) +
                                                    " leaves no room for data or is too large");
  }
  if (options.window_chunks == 0 || options.resend_after_ms <= 0 ||
      options.give_up_after_ms < options.resend_after_ms) {
    return Status::InvalidArgument(
        "ErrConfig",
        "snapshot sender needs window_chunks >= 1 and 0 < resend_after_ms <= give_up_after_ms");
  }
  int fd;
  do {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) {
      return Status::NotFound("ErrNoSnapshot", "snapshot file " + path + " does not exist");
    }
    return ErrnoStatus("open", path, err);
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::InvalidArgument("ErrNoSnapshot", path + " is not a regular file");
  }
  return std::unique_ptr<SnapshotSender>(
      new SnapshotSender(fd, id, options, static_cast<uint64_t>(st.st_size), now_ms));
}

SnapshotSender::SnapshotSender(int fd, const SnapshotId& id, const SnapshotSenderOptions& options,
                               uint64_t total_bytes, int64_t now_ms)
    : fd_(fd),
      id_(id),
      options_(options),
      total_bytes_(total_bytes),
      data_bytes_max_(options.message_bytes_max - kSnapshotChunkHeaderBytes),
      last_progress_ms_(now_ms),
      timer_start_ms_(now_ms) {}

SnapshotSender::~SnapshotSender() { close(fd_); }

void SnapshotSender::Rewind(int64_t now_ms) {
  next_offset_ = acked_;
  last_sent_ = false;
  timer_start_ms_ = now_ms;
}

Result<std::optional<std::string>> SnapshotSender::Next(int64_t now_ms) {
  if (done_ || failed()) return std::optional<std::string>();
  const bool in_flight = last_sent_ || next_offset_ > acked_;
  if (in_flight && now_ms - last_progress_ms_ >= options_.give_up_after_ms) {
    failure_ = Timeout("snapshot " + id_.ToString() + ": no acknowledgement for " +
                       std::to_string(now_ms - last_progress_ms_) + " ms at offset " +
                       std::to_string(acked_) + " of " + std::to_string(total_bytes_));
    return failure_;
  }
  if (in_flight && now_ms - timer_start_ms_ >= options_.resend_after_ms) Rewind(now_ms);
  if (last_sent_) return std::optional<std::string>();
  const uint64_t window_bytes = static_cast<uint64_t>(options_.window_chunks) * data_bytes_max_;
  if (next_offset_ - acked_ >= window_bytes) return std::optional<std::string>();

  const size_t n =
      static_cast<size_t>(std::min<uint64_t>(data_bytes_max_, total_bytes_ - next_offset_));
  buffer_.resize(n);
  Status s = ReadFully(fd_, "snapshot " + id_.ToString(), next_offset_, buffer_.data(), n);
  if (!s.ok()) {
    failure_ = s;
    return s;
  }
  // Chunks go out in file order and a rewind only goes back, so the first
  // time a chunk is read every byte before it has been counted.
  assert(crc_through_ >= next_offset_);
  if (crc_through_ == next_offset_) {
    file_crc_ = Crc32cExtend(file_crc_, buffer_.data(), n);
    crc_through_ += n;
  }
  SnapshotChunk chunk;
  chunk.id = id_;
  chunk.offset = next_offset_;
  chunk.total_bytes = total_bytes_;
  chunk.last = next_offset_ + n == total_bytes_;
  chunk.file_crc32c = chunk.last ? file_crc_ : 0;
  chunk.data = buffer_;
  if (!in_flight) timer_start_ms_ = now_ms;  // the resend timer runs while something is out
  next_offset_ += n;
  sent_max_ = std::max(sent_max_, next_offset_);
  last_sent_ = chunk.last;
  last_sent_once_ = last_sent_once_ || chunk.last;
  return std::optional<std::string>(EncodeSnapshotChunk(chunk));
}

Status SnapshotSender::OnAck(const SnapshotAck& ack, int64_t now_ms) {
  if (ack.id != id_ || done_ || failed()) return Status::OK();
  switch (ack.state) {
    case SnapshotAckState::kRejected:
      failure_ =
          Status::Unavailable("ErrSnapshotRejected", "the receiver of snapshot " + id_.ToString() +
                                                         " is taking a newer one");
      return Status::OK();
    case SnapshotAckState::kFailed:
      failure_ =
          Status::Unavailable("ErrSnapshotFailed", "the receiver of snapshot " + id_.ToString() +
                                                       " could not check or store it");
      return Status::OK();
    case SnapshotAckState::kDone:
      // Only the last chunk can complete the transfer.
      if (ack.next_offset != total_bytes_ || !last_sent_once_) {
        return Status::InvalidArgument(
            "ErrSnapshotMessage", "snapshot " + id_.ToString() + ": done before the last chunk");
      }
      done_ = true;
      acked_ = next_offset_ = total_bytes_;
      last_progress_ms_ = now_ms;
      return Status::OK();
    case SnapshotAckState::kReceiving:
      break;
  }
  const uint64_t next = ack.next_offset;
  // A receiver still receiving expects a chunk boundary it has been sent,
  // short of the end (the last chunk answers kDone or kFailed).
  if (next > sent_max_ || (next >= total_bytes_ && total_bytes_ != 0) ||
      (next % data_bytes_max_) != 0) {
    return Status::InvalidArgument("ErrSnapshotMessage",
                                   "snapshot " + id_.ToString() + ": ack expects offset " +
                                       std::to_string(next) + ", never sent as a chunk start");
  }
  if (next > acked_) {
    acked_ = next;
    last_progress_ms_ = now_ms;
    timer_start_ms_ = now_ms;
    // An ack that overtook a rewind: do not send again what it covers.
    if (next_offset_ < acked_) next_offset_ = acked_;
  }
  if (ack.gap && next == acked_ && next_offset_ > acked_ && rewound_for_gap_at_ != acked_) {
    rewound_for_gap_at_ = acked_;
    Rewind(now_ms);
  }
  return Status::OK();
}

// ---- SnapshotReceiver -----------------------------------------------------

SnapshotReceiver::SnapshotReceiver(SnapshotReceiverOptions options)
    : options_(std::move(options)), tmp_path_(options_.path + ".tmp") {}

SnapshotReceiver::~SnapshotReceiver() {
  if (state_ == State::kReceiving) CloseAndRemoveTemp();
}

void SnapshotReceiver::CloseAndRemoveTemp() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  (void)RemoveFileIfExists(tmp_path_);  // best effort: a leftover is truncated by the next start
}

void SnapshotReceiver::Abandon() {
  if (state_ == State::kReceiving) CloseAndRemoveTemp();
  state_ = State::kIdle;
}

SnapshotAck SnapshotReceiver::AckNow(SnapshotAckState state, bool gap) const {
  SnapshotAck ack;
  ack.id = id_;
  ack.next_offset = next_offset_;
  ack.state = state;
  ack.gap = gap;
  return ack;
}

Status SnapshotReceiver::Fail(Status why, SnapshotAck* ack) {
  CloseAndRemoveTemp();
  state_ = State::kIdle;
  *ack = AckNow(SnapshotAckState::kFailed);
  return why;
}

Status SnapshotReceiver::Start(const SnapshotChunk& chunk) {
  if (state_ == State::kReceiving) CloseAndRemoveTemp();
  state_ = State::kReceiving;
  id_ = chunk.id;
  total_bytes_ = chunk.total_bytes;
  next_offset_ = 0;
  crc_ = 0;
  do {
    fd_ = open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) {
    int err = errno;
    return ErrnoStatus("create", tmp_path_, err);
  }
  return Status::OK();
}

Status SnapshotReceiver::Finish(const SnapshotChunk& chunk) {
  if (next_offset_ != total_bytes_) {
    return Status::Corruption("snapshot " + id_.ToString() + " ended at " +
                              std::to_string(next_offset_) + " of " + std::to_string(total_bytes_) +
                              " bytes");
  }
  if (crc_ != chunk.file_crc32c) {
    return Status::Corruption("snapshot " + id_.ToString() + " fails its file checksum");
  }
  if (fsync(fd_) != 0) {
    int err = errno;
    return ErrnoStatus("fsync", tmp_path_, err);
  }
  int fd = std::exchange(fd_, -1);
  if (close(fd) != 0) {
    int err = errno;
    return ErrnoStatus("close", tmp_path_, err);
  }
  return RenameDurably(tmp_path_, options_.path);
}

Status SnapshotReceiver::OnChunk(const SnapshotChunk& chunk, SnapshotAck* ack) {
  Status valid = CheckChunk(chunk, options_.total_bytes_max);
  const bool current = state_ != State::kIdle && chunk.id == id_;
  if (!current && state_ != State::kIdle && chunk.id < id_) {
    *ack = SnapshotAck{chunk.id, 0, SnapshotAckState::kRejected, false};
    return Status::Unavailable("ErrSnapshotRejected", "snapshot " + chunk.id.ToString() +
                                                          " is older than " + id_.ToString());
  }
  if (!current) {
    // Idle, or a newer snapshot: a bad first chunk must not cost the
    // transfer under way.
    if (!valid.ok()) {
      *ack = SnapshotAck{chunk.id, 0, SnapshotAckState::kFailed, false};
      return valid;
    }
    Status started = Start(chunk);
    if (!started.ok()) return Fail(started, ack);
  }
  if (state_ == State::kDone) {
    *ack = AckNow(SnapshotAckState::kDone);
    return Status::OK();
  }
  if (valid.ok() && chunk.total_bytes != total_bytes_) {
    valid = BadChunk(chunk, "total " + std::to_string(chunk.total_bytes) + " differs from " +
                                std::to_string(total_bytes_));
  }
  if (!valid.ok()) {
    *ack = AckNow(SnapshotAckState::kReceiving);
    return valid;
  }
  if (chunk.offset != next_offset_) {
    // A duplicate (behind) or a chunk that overtook a lost one (ahead).
    *ack = AckNow(SnapshotAckState::kReceiving, chunk.offset > next_offset_);
    return Status::OK();
  }
  Status written = WriteFully(fd_, tmp_path_, next_offset_, chunk.data.data(), chunk.data.size());
  if (!written.ok()) return Fail(written, ack);
  crc_ = Crc32cExtend(crc_, chunk.data.data(), chunk.data.size());
  next_offset_ += chunk.data.size();
  if (!chunk.last) {
    *ack = AckNow(SnapshotAckState::kReceiving);
    return Status::OK();
  }
  Status finished = Finish(chunk);
  if (!finished.ok()) return Fail(finished, ack);
  state_ = State::kDone;
  *ack = AckNow(SnapshotAckState::kDone);
  return Status::OK();
}

}  // namespace natcd::server
