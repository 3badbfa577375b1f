// Member's internals, shared by the files that implement its concepts:
//   member.cc           the public API, opening, the queue, the turn, shutdown
//   member_requests.cc  requests: local reads, writes becoming proposals,
//                       forwarding, waiting for a leader, membership and
//                       move-leader requests
//   member_ready.cc     the one Ready loop (persist, send, apply, commit,
//                       Advance), ticks, log compaction, snapshot install
//   member_apply.cc     log entries into the engine, remembered outcomes
//   member_leader.cc    leader duties: lease expiry and checkpoints,
//                       auto-compaction, lease promotion on a new leader
// with proposals.h, linearizable_reads.h, membership.h, snapshot_shipper.h
// and event_continuity.h holding their own state.
//
// Thread safety: `mu` guards the queue and `stopping`; the atomics are the
// observers' view; everything else belongs to the member thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "natcd/auto_compactor.h"
#include "raft/raft.h"
#include "raft/sqlite_raft_storage.h"
#include "server/event_continuity.h"
#include "server/linearizable_reads.h"
#include "server/log_command.h"
#include "server/member.h"
#include "server/membership.h"
#include "server/proposals.h"
#include "server/proposed_commands.h"
#include "server/snapshot_shipper.h"

namespace natcd::server {

struct Member::Impl {
  // What the member thread takes from the queue.
  struct Item {
    enum class Kind {
      kRequest,
      kTask,
      kRaft,
      kSnapshotChunk,
      kSnapshotAck,
      kDisconnected,
      kReconnected
    } kind = Kind::kRequest;
    std::unique_ptr<Request> request;
    std::function<void(Engine&)> task;
    raft::Message raft_message;
    std::string bytes;
  };
  // An answer held until the turn that produced it is durable.
  struct Answer {
    std::unique_ptr<Request> request;
    Result<Response> response;
    bool is_write = false;
  };
  using Answers = std::vector<Answer>;
  // Leadership handed to target: answered once it leads, or on timeout.
  struct MovingLeader {
    std::unique_ptr<Request> request;
    NodeId target = 0;
  };

  Impl(const MemberOptions& opts);

  // ---- constant after Open ----
  MemberOptions options;
  Clock* clock = nullptr;
  PeerTransport* transport = nullptr;
  EventSink* events = nullptr;
  std::vector<FrontEnd*> front_ends;

  // ---- guarded by mu ----
  std::mutex mu;
  std::condition_variable wake;
  std::vector<Item> queue;
  bool stopping = false;

  // ---- the caller of Start/Stop ----
  std::thread thread;
  bool started = false;
  bool stopped = false;

  // ---- observers' view (any thread) ----
  std::atomic<bool> leader_now{false};
  std::atomic<NodeId> lead_now{0};
  std::atomic<uint64_t> term_now{0};

  // ---- member thread only ----
  std::mt19937_64 rng;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<AutoCompactor> compactor;
  std::unique_ptr<raft::SqliteRaftStorage> raft_storage;
  std::unique_ptr<raft::Raft> raft;
  Membership membership;
  Proposals proposals;
  LinearizableReads reads;
  SnapshotShipper shipper;
  EventContinuity continuity;

  bool leader = false;
  uint64_t raft_term = 0;
  int64_t next_tick_ms = 0;
  uint64_t applied_index = 0;         // the last log entry applied (no-ops included)
  raft::HardState synced_hard_state;  // term and vote as last fsynced
  uint64_t snapshot_index = 0;        // where the log was last compacted
  // This turn's entries, proposed together (FlushProposals), and the
  // proposal numbers among them that a client waits for.
  std::vector<std::string> turn_entries;
  std::vector<LogCommand> turn_commands;  // turn_entries, not encoded
  std::vector<uint64_t> turn_seqs;
  // What this leader proposed, until applied (ApplyEntry).
  ProposedCommands proposed_commands;
  // Requests for the leader while there is none, until their deadline.
  std::vector<std::unique_ptr<Request>> waiting_for_leader;
  std::vector<MovingLeader> moving_leader;

  // Leader duties.
  bool leases_paused = false;  // cut off from the clients (OnDisconnected)
  int64_t paused_at_ms = 0;
  // The last time this member heard from a leader (or was one): a new
  // leader gives every lease the time since, during which no holder could
  // renew.
  int64_t leader_contact_ms = 0;
  int64_t next_lease_check_ms = 0;
  int64_t next_checkpoint_ms = 0;
  int64_t next_front_end_tick_ms = 0;
  int64_t next_progress_ms = 0;

  // member.cc
  Status Open();
  Status OpenEngine();
  Status OpenRaftStorage();
  Status Found();
  Status CreateRaft();
  void Enqueue(Item item);
  void Loop();
  void Turn(std::vector<Item> batch);
  void Take(Item item, Answers* answers);
  void Deliver(Answers* answers, const Status& committed);
  void Shutdown();

  // member_requests.cc
  ResponseHeader Now() const;
  void Answer_(Answers* answers, std::unique_ptr<Request> request, Result<Response> response,
               bool is_write = false);
  void Handle(std::unique_ptr<Request> request, Answers* answers);
  void HandleLocal(std::unique_ptr<Request> request, Answers* answers);
  void HandleWrite(std::unique_ptr<Request> request, Answers* answers);
  void HandleMembership(std::unique_ptr<Request> request, Answers* answers);
  void HandleMoveLeader(std::unique_ptr<Request> request, Answers* answers);
  void AnswerMovedLeader(Answers* answers);
  void Forward(std::unique_ptr<Request> request, Answers* answers);
  void Propose(LogCommand command);
  void FlushProposals(Answers* answers);
  void ConfirmReads(Answers* answers);
  void ServeConfirmedReads(Answers* answers);
  void RetryWaiting(Answers* answers);

  // member_ready.cc
  void Tick();
  void ProcessReady(Answers* answers);
  void Send(const raft::Message& m);
  void MaybeCompactLog();
  Status InstallSnapshot(const raft::SnapshotMeta& meta);
  SnapshotShipper::Leader ShipperLeader();

  // member_apply.cc
  void ApplyEntry(const raft::Entry& entry, Answers* answers);
  void ApplyConfChange(const raft::Entry& entry, Answers* answers);
  std::optional<Result<Response>> Remembered(const Request& request);

  // member_leader.cc
  void Timers();
  void BecameLeader(bool now_leader);
};

}  // namespace natcd::server
