#include "server/snapshot_shipper.h"

#include <cstdio>
#include <filesystem>

#include "storage/durable_file.h"
#include "storage/sqlite_snapshot.h"

namespace natcd::server {
namespace {

std::string DataDir(const std::string& db_path) {
  const std::string dir = std::filesystem::path(db_path).parent_path().string();
  return dir.empty() ? "." : dir;
}

std::string Hex(NodeId id) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

}  // namespace

SnapshotShipper::SnapshotShipper(NodeId member_id, std::string db_path, std::string log_name,
                                 Clock* clock, bool copy_on_caller_thread)
    : member_id_(member_id),
      db_path_(std::move(db_path)),
      data_dir_(DataDir(db_path_)),
      log_name_(std::move(log_name)),
      clock_(clock),
      copy_on_caller_thread_(copy_on_caller_thread) {}

SnapshotShipper::~SnapshotShipper() { Abandon(nullptr); }

void SnapshotShipper::Start(raft::Message m) {
  const NodeId to = m.to;
  if (outgoing_.count(to) != 0) return;  // one at a time
  auto out = std::make_unique<Outgoing>();
  out->message = std::move(m);
  out->path = data_dir_ + "/snapshot-for-" + Hex(to) + ".db";
  Outgoing* raw = out.get();
  auto copy = [raw, db_path = db_path_] {
    raw->copy = WriteDatabaseSnapshot(db_path, raw->path);
    raw->copied.store(true);
  };
  if (copy_on_caller_thread_) {
    copy();
  } else {
    out->copier = std::thread(copy);
  }
  fprintf(stderr, "natcd %s: sending a snapshot to %s\n", log_name_.c_str(), Hex(to).c_str());
  outgoing_.emplace(to, std::move(out));
}

void SnapshotShipper::Abandon(raft::Raft* report_to) {
  for (auto& [to, out] : outgoing_) {
    if (out->copier.joinable()) out->copier.join();
    if (report_to != nullptr) report_to->ReportSnapshot(to, /*failed=*/true);
    (void)RemoveFileIfExists(out->path);
  }
  outgoing_.clear();
}

void SnapshotShipper::Pump(const Leader& leader) {
  const int64_t now = clock_->MonotonicMs();
  for (auto it = outgoing_.begin(); it != outgoing_.end();) {
    const NodeId to = it->first;
    Outgoing& out = *it->second;
    if (!out.copied.load()) {
      ++it;
      continue;
    }
    Status failed;
    if (out.sender == nullptr) {
      if (out.copier.joinable()) out.copier.join();
      const auto& history = *leader.conf_history;
      if (!out.copy.ok()) {
        failed = out.copy.status();
      } else if (auto conf = history.upper_bound(*out.copy); conf == history.begin()) {
        // More membership changes since the copy than are remembered.
        failed = Status::Unavailable("ErrSnapshot", "membership changed since the copy");
      } else {
        out.meta.index = *out.copy;
        out.meta.conf_state = std::prev(conf)->second;
        Result<uint64_t> term = leader.storage->Term(out.meta.index);
        if (!term.ok()) {
          failed = term.status();
        } else {
          out.meta.term = *term;
          Result<std::unique_ptr<SnapshotSender>> sender = SnapshotSender::Open(
              out.path, SnapshotId{leader.raft->term(), out.meta.index, member_id_}, {}, now);
          if (sender.ok()) {
            out.sender = std::move(sender).value();
          } else {
            failed = sender.status();
          }
        }
      }
    }
    while (failed.ok() && out.sender && !out.sender->done() && !out.sender->failed()) {
      Result<std::optional<std::string>> chunk = out.sender->Next(now);
      if (!chunk.ok() || !chunk->has_value()) break;
      if (transport_ != nullptr) transport_->SendSnapshotChunk(to, **chunk);
    }
    if (failed.ok() && out.sender && out.sender->failed()) failed = out.sender->failure();
    if (failed.ok() && !(out.sender && out.sender->done())) {
      ++it;
      continue;
    }
    if (failed.ok()) {
      // The follower holds the database: now the MsgSnap that installs it.
      out.message.snapshot.meta = out.meta;
      leader.send(out.message);
      leader.raft->ReportSnapshot(to, /*failed=*/false);
      fprintf(stderr, "natcd %s: snapshot at index %llu (%llu bytes) sent to %s\n",
              log_name_.c_str(), static_cast<unsigned long long>(out.meta.index),
              static_cast<unsigned long long>(out.sender->total_bytes()), Hex(to).c_str());
    } else {
      leader.raft->ReportSnapshot(to, /*failed=*/true);
      fprintf(stderr, "natcd %s: snapshot to %s failed: %s\n", log_name_.c_str(), Hex(to).c_str(),
              failed.ToString().c_str());
    }
    (void)RemoveFileIfExists(out.path);
    it = outgoing_.erase(it);
  }
}

void SnapshotShipper::OnAck(const std::string& bytes, const Leader& leader) {
  Result<SnapshotAck> ack = DecodeSnapshotAck(bytes);
  if (!ack.ok()) return;
  for (auto& [to, out] : outgoing_) {
    if (out->sender && out->sender->id() == ack->id) {
      (void)out->sender->OnAck(*ack, clock_->MonotonicMs());
    }
  }
  Pump(leader);
}

void SnapshotShipper::OnChunk(const std::string& bytes) {
  Result<SnapshotChunk> chunk = DecodeSnapshotChunk(bytes);
  if (!chunk.ok()) return;  // damaged: the leader sends it again
  if (receiver_ == nullptr) {
    SnapshotReceiverOptions options;
    options.path = data_dir_ + "/snapshot-received.db";
    receiver_ = std::make_unique<SnapshotReceiver>(options);
  }
  SnapshotAck ack;
  (void)receiver_->OnChunk(*chunk, &ack);
  if (transport_ != nullptr) transport_->SendSnapshotAck(chunk->id.leader, EncodeSnapshotAck(ack));
}

bool SnapshotShipper::HasWhole(const raft::SnapshotMeta& meta, NodeId leader) const {
  return receiver_ != nullptr && receiver_->done() && receiver_->current_id().index == meta.index &&
         receiver_->current_id().leader == leader;
}

std::string SnapshotShipper::received_path() const {
  return receiver_ ? receiver_->path() : std::string();
}

}  // namespace natcd::server
