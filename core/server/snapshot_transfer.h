// Shipping a snapshot file (the state machine's database, see
// core/storage/sqlite_snapshot.h) from the leader to one member, in chunks
// of at most one NATS message each, with flow control. Pure logic: no NATS
// calls and no clocks inside -- the node publishes what Next() returns,
// feeds back what arrives, and passes the time in -- so every path is
// unit-testable and deterministic.
//
// The protocol (the bytes are in snapshot_chunk.h):
//  - The sender sends chunks in file order, each at the offset where the
//    previous one ended, with at most window_chunks of them unacknowledged
//    (a 150 MB database must not go into NATS at once: core NATS drops
//    messages for a subscriber that falls behind).
//  - The receiver takes only the chunk at the offset it expects next,
//    writes it to a temporary file and answers every chunk with an ack
//    carrying the offset it expects next (cumulative, like TCP's). A
//    duplicate or an out-of-order chunk is dropped, and answered the same
//    way; an out-of-order one sets the ack's gap flag.
//  - The sender goes back to the last acknowledged offset when an ack
//    reports a gap (once per offset: the rest of the window reports the
//    same gap), or when no ack has moved it forward for resend_after_ms.
//    It gives up after give_up_after_ms without progress.
//  - The last chunk carries the CRC-32C of the whole file. The receiver
//    checks the size and that checksum, fsyncs the file, renames it into
//    place and answers kDone; a mismatch answers kFailed and ends the
//    transfer (the leader may start it again).
//  - One transfer at a time per receiver. A chunk of a newer snapshot
//    (SnapshotId order) abandons the current one and starts over at offset
//    0; a chunk of an older one is answered kRejected, which ends that
//    sender.
// Each chunk also carries its own checksum (over header and data), so a
// damaged message never reaches the file; a lost one is sent again.
//
// Memory: each side holds at most one chunk of file bytes (the sender its
// read buffer; the receiver writes from the message buffer). Nothing holds
// the whole file.
//
// Thread safety: none; each object has one owner thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "server/snapshot_chunk.h"
#include "natcd/status.h"

namespace natcd::server {

struct SnapshotSenderOptions {
  // Bytes of one encoded chunk, header included: the NATS server's
  // max_payload (1 MiB by default) minus headroom for message headers.
  size_t message_bytes_max = (1 << 20) - (4 << 10);
  // Chunks sent but not yet acknowledged, at most.
  size_t window_chunks = 4;
  // Without an ack that moves the transfer forward for this long, the
  // unacknowledged chunks are sent again.
  int64_t resend_after_ms = 2'000;
  // ... and after this long the transfer fails (the receiver is gone).
  int64_t give_up_after_ms = 30'000;
};

class SnapshotSender {
 public:
  // Opens the file at path (which must not change while it is sent) to
  // ship it as snapshot id. now_ms starts the progress timers.
  // InvalidArgument for options that cannot work; IOError / NotFound for
  // the file.
  static Result<std::unique_ptr<SnapshotSender>> Open(const std::string& path, const SnapshotId& id,
                                                      const SnapshotSenderOptions& options,
                                                      int64_t now_ms);
  ~SnapshotSender();
  SnapshotSender(const SnapshotSender&) = delete;
  SnapshotSender& operator=(const SnapshotSender&) = delete;

  // The next chunk to publish, encoded; nullopt when there is nothing to
  // send now (the window is full, everything is sent and awaits its ack,
  // or the transfer is over). Call it until it returns nullopt after every
  // OnAck and on a timer (at least every resend_after_ms): that is when a
  // lost chunk is sent again. An error (a read failed, or
  // give_up_after_ms passed without progress) ends the transfer: failed().
  Result<std::optional<std::string>> Next(int64_t now_ms);

  // Takes an ack from the receiver. An ack of another snapshot is ignored
  // (OK); one that acknowledges bytes never sent is InvalidArgument and
  // ignored. kFailed and kRejected end the transfer: failed().
  Status OnAck(const SnapshotAck& ack, int64_t now_ms);

  const SnapshotId& id() const { return id_; }
  // The receiver has the whole file, checked and durable.
  bool done() const { return done_; }
  // The transfer is over without success; failure() says why.
  bool failed() const { return !failure_.ok(); }
  const Status& failure() const { return failure_; }
  uint64_t total_bytes() const { return total_bytes_; }
  uint64_t acked_bytes() const { return acked_; }
  // Bytes sent but not acknowledged (at most the window's worth).
  uint64_t in_flight_bytes() const { return next_offset_ - acked_; }

 private:
  SnapshotSender(int fd, const SnapshotId& id, const SnapshotSenderOptions& options,
                 uint64_t total_bytes, int64_t now_ms);
  void Rewind(int64_t now_ms);

  // Constant after construction.
  const int fd_;
  const SnapshotId id_;
  const SnapshotSenderOptions options_;
  const uint64_t total_bytes_;
  const size_t data_bytes_max_;  // file bytes per chunk

  // Invariant: acked_ <= next_offset_ <= total_bytes_ and acked_ <=
  // sent_max_ <= total_bytes_; every offset here is a chunk boundary
  // (a multiple of data_bytes_max_, or total_bytes_).
  uint64_t acked_ = 0;           // the receiver has everything before this
  uint64_t next_offset_ = 0;     // where the next chunk starts
  uint64_t sent_max_ = 0;        // the end of the furthest chunk ever sent
  bool last_sent_ = false;       // the last chunk went out since the last rewind
  bool last_sent_once_ = false;  // ... at least once: only then can the receiver be done
  // The running CRC-32C of [0, crc_through_): each byte is added the first
  // time it is read, so resends do not count it twice.
  uint32_t file_crc_ = 0;
  uint64_t crc_through_ = 0;
  // The offset of the last gap-triggered rewind, so that one loss, reported
  // by every later chunk of the window, rewinds once.
  std::optional<uint64_t> rewound_for_gap_at_;
  int64_t last_progress_ms_;  // when acked_ last moved (or the start)
  // The resend timer: restarted by progress, by a rewind, and by a send
  // when nothing was out.
  int64_t timer_start_ms_;
  bool done_ = false;
  Status failure_;
  std::string buffer_;  // one chunk of file bytes, reused
};

struct SnapshotReceiverOptions {
  // Where a complete snapshot ends up; it is written as path + ".tmp"
  // first. Take it away (install or rename it) before another transfer
  // completes: a later one replaces it.
  std::string path;
  // A larger announced size is refused before anything is written.
  uint64_t total_bytes_max = uint64_t{1} << 40;  // 1 TiB
};

class SnapshotReceiver {
 public:
  explicit SnapshotReceiver(SnapshotReceiverOptions options);
  // Closes the temporary file of an unfinished transfer and removes it.
  ~SnapshotReceiver();
  SnapshotReceiver(const SnapshotReceiver&) = delete;
  SnapshotReceiver& operator=(const SnapshotReceiver&) = delete;

  // Takes one decoded chunk. *ack is always set to what to answer the
  // sender, even on error. OK when the chunk was written or harmlessly
  // dropped (a duplicate, out of order, or of the transfer already done).
  // Errors, each leaving the receiver able to go on:
  //  - InvalidArgument: the chunk contradicts itself or its transfer
  //    (extends past the total, a different total, a last flag at the
  //    wrong place, larger than total_bytes_max); it is dropped, and
  //    answered kFailed if it would have started a transfer.
  //  - Unavailable: an older snapshot than the current one (kRejected).
  //  - Corruption: the whole file fails its size or checksum (kFailed; the
  //    transfer is dropped and its file removed).
  //  - IOError: writing, syncing or renaming the file failed (kFailed, as
  //    above).
  Status OnChunk(const SnapshotChunk& chunk, SnapshotAck* ack);

  // Drops the current transfer (removing its temporary file) and forgets
  // a completed one, so a chunk of it starts it again.
  void Abandon();

  // A transfer is under way (chunks of current_id() are expected).
  bool receiving() const { return state_ == State::kReceiving; }
  // The transfer of current_id() completed: the file is at path().
  bool done() const { return state_ == State::kDone; }
  // The snapshot received or being received; meaningless when neither.
  const SnapshotId& current_id() const { return id_; }
  const std::string& path() const { return options_.path; }
  uint64_t received_bytes() const { return next_offset_; }

 private:
  enum class State { kIdle, kReceiving, kDone };
  Status Start(const SnapshotChunk& chunk);
  Status Finish(const SnapshotChunk& chunk);
  Status Fail(Status why, SnapshotAck* ack);
  void CloseAndRemoveTemp();
  SnapshotAck AckNow(SnapshotAckState state, bool gap = false) const;

  const SnapshotReceiverOptions options_;
  const std::string tmp_path_;
  State state_ = State::kIdle;
  // The transfer under way or done (meaningless when idle).
  SnapshotId id_;
  uint64_t total_bytes_ = 0;
  // Invariant: next_offset_ <= total_bytes_; the temporary file holds
  // exactly [0, next_offset_) of the snapshot, and crc_ is its CRC-32C.
  uint64_t next_offset_ = 0;
  uint32_t crc_ = 0;
  int fd_ = -1;  // the temporary file while receiving
};

}  // namespace natcd::server
