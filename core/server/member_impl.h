// Member's internals, shared by the files that implement its concepts:
//   member.cc           the public API, opening, the queue, the turn, shutdown
//   member_requests.cc  requests: local reads, writes becoming proposals,
//                       forwarding, waiting for a leader, membership and
//                       move-leader requests
//   member_ready.cc     the one Ready loop (persist, send, apply, commit,
//                       Advance), ticks, log compaction, snapshot install
//   member_rejoin.cc    a member out of Raft after a storage error coming
//                       back once its storage works again
//   member_apply.cc     log entries into the engine, remembered outcomes
//   member_auth.cc      auth: the permission check of every request, the
//                       Auth service's calls, tokens, applied auth changes
//   member_leader.cc    leader duties: lease expiry and checkpoints, the
//                       renewals held for their checkpoint, auto-compaction,
//                       lease promotion on a new leader
//   member_alarms.cc    alarms: what raised ones refuse on arrival, the
//                       backend quota (raising NOSPACE), the Alarm calls,
//                       the leader's periodic corruption check (CORRUPT)
// with proposals.h, linearizable_reads.h, membership.h, snapshot_shipper.h,
// held_renewals.h and event_continuity.h holding their own state.
//
// Thread safety, as clang's -Wthread-safety checks it (make
// check-thread-safety): `mu` guards the queue and `stopping`; the atomics are
// the observers' view; everything else is GUARDED_BY the member_thread role,
// which the thread that runs the member (Loop, or the caller of RunOneTurn,
// Open and a Stop without Start) asserts, and every method below requires.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "auth/simple_tokens.h"
#include "natcd/auto_compactor.h"
#include "natcd/mutex.h"
#include "raft/durable_raft_storage.h"
#include "raft/raft.h"
#include "server/event_continuity.h"
#include "server/held_renewals.h"
#include "server/linearizable_reads.h"
#include "server/log_command.h"
#include "server/member.h"
#include "server/membership.h"
#include "server/online_backups.h"
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
  Mutex mu;
  CondVar wake;
  std::vector<Item> queue GUARDED_BY(mu);
  bool stopping GUARDED_BY(mu) = false;

  // Held by the thread running the member.
  ThreadRole member_thread;

  // ---- the caller of Start/Stop ----
  std::thread thread;
  bool started = false;
  bool stopped = false;

  // ---- observers' view (any thread) ----
  std::atomic<bool> leader_now{false};
  std::atomic<NodeId> lead_now{0};
  std::atomic<uint64_t> term_now{0};

  // ---- member thread only ----
  std::mt19937_64 rng GUARDED_BY(member_thread);
  std::unique_ptr<Engine> engine GUARDED_BY(member_thread);
  std::unique_ptr<AutoCompactor> compactor GUARDED_BY(member_thread);
  raftlog::PosixLogFs log_fs;  // stateless: the real file system
  std::unique_ptr<raft::DurableRaftStorage> raft_storage GUARDED_BY(member_thread);
  std::unique_ptr<raft::Raft> raft GUARDED_BY(member_thread);
  Membership membership GUARDED_BY(member_thread);
  Proposals proposals GUARDED_BY(member_thread);
  LinearizableReads reads GUARDED_BY(member_thread);
  SnapshotShipper shipper GUARDED_BY(member_thread);
  // Backups for clients (thread-safe itself; copies run on their own threads).
  OnlineBackups backups;
  EventContinuity continuity GUARDED_BY(member_thread);

  bool leader GUARDED_BY(member_thread) = false;
  uint64_t raft_term GUARDED_BY(member_thread) = 0;
  int64_t next_tick_ms GUARDED_BY(member_thread) = 0;
  uint64_t applied_index GUARDED_BY(member_thread) =
      0;  // the last log entry applied (no-ops included)
  raft::HardState synced_hard_state GUARDED_BY(member_thread);  // term and vote as last fsynced
  uint64_t snapshot_index GUARDED_BY(member_thread) = 0;        // where the log was last compacted
  // This turn's entries, proposed together (FlushProposals), and the
  // proposal numbers among them that a client waits for.
  std::vector<std::string> turn_entries GUARDED_BY(member_thread);
  std::vector<LogCommand> turn_commands GUARDED_BY(member_thread);  // turn_entries, not encoded
  std::vector<uint64_t> turn_seqs GUARDED_BY(member_thread);
  // What this leader proposed, until applied (ApplyEntry).
  ProposedCommands proposed_commands GUARDED_BY(member_thread);
  // Requests for the leader while there is none, until their deadline.
  std::vector<std::unique_ptr<Request>> waiting_for_leader GUARDED_BY(member_thread);
  // Requests whose token this member has not applied yet (its index, after
  // the dot, is past applied_index): etcd's simple tokens wait for it too.
  std::vector<std::unique_ptr<Request>> waiting_for_token GUARDED_BY(member_thread);
  // Front-end tasks held alike (RunOnMemberThreadWithToken).
  struct TokenTask {
    std::string token;
    int64_t since_ms = 0;
    std::function<void(Engine&)> task;
  };
  std::vector<TokenTask> tasks_waiting_for_token GUARDED_BY(member_thread);
  std::vector<MovingLeader> moving_leader GUARDED_BY(member_thread);
  // Keepalives answered once their checkpoint is applied (held_renewals.h).
  HeldRenewals held_renewals GUARDED_BY(member_thread);
  // Set once persisting a Ready failed (a full disk, an I/O error): the
  // member is out of Raft, and every request is refused with this
  // (LeaveRaft), until its storage works again (member_rejoin.cc).
  Status storage_failure GUARDED_BY(member_thread);
  // When the member out of Raft next tries to rejoin, the wait after that
  // try if it fails, and when it last rejoined.
  int64_t next_rejoin_ms GUARDED_BY(member_thread) = 0;
  int64_t rejoin_backoff_ms GUARDED_BY(member_thread) = 0;
  int64_t rejoined_at_ms GUARDED_BY(member_thread) = 0;
  // Front-end operations that came while a failed reopening left no engine
  // (a snapshot install, or a try to rejoin): run once one opens.
  std::vector<std::function<void(Engine&)>> tasks_without_engine GUARDED_BY(member_thread);

  // Leader duties.
  bool leases_paused GUARDED_BY(member_thread) =
      false;  // cut off from the clients (OnDisconnected)
  int64_t paused_at_ms GUARDED_BY(member_thread) = 0;
  // The last time this member heard from a leader (or was one): a new
  // leader gives every lease the time since, during which no holder could
  // renew.
  int64_t leader_contact_ms GUARDED_BY(member_thread) = 0;
  // A new leader decides lease expiry only once it has applied the entries
  // of earlier terms (up to leases_from_index: a checkpoint or an expiry
  // its predecessor proposed may be among them); until then no lease
  // expires and no renewal is answered. leases_unrenewable_since_ms: since
  // when holders could not renew (no leader reachable, then the wait).
  bool leases_taken_over GUARDED_BY(member_thread) = false;
  uint64_t leases_from_index GUARDED_BY(member_thread) = 0;
  int64_t leases_unrenewable_since_ms GUARDED_BY(member_thread) = 0;
  int64_t next_lease_check_ms GUARDED_BY(member_thread) = 0;
  int64_t next_checkpoint_ms GUARDED_BY(member_thread) = 0;
  int64_t next_front_end_tick_ms GUARDED_BY(member_thread) = 0;
  // This member's client URLs (Member::SetClientUrls, before Start), and
  // when it may propose them again.
  std::vector<std::string> client_urls;
  int64_t next_publish_ms GUARDED_BY(member_thread) = 0;
  int64_t next_progress_ms GUARDED_BY(member_thread) = 0;

  // Metrics (options.metrics, may be null).
  NodeId metrics_lead GUARDED_BY(member_thread) = 0;  // the leader last counted
  int64_t next_db_size_ms GUARDED_BY(member_thread) = 0;

  // Auth: the simple tokens every member assigns at apply (each ages its own).
  auth::SimpleTokens tokens GUARDED_BY(member_thread);
  int64_t next_token_prune_ms GUARDED_BY(member_thread) = 0;
  // The password hashes as last applied, for the front ends' threads
  // (Member::PasswordHash): copied after each applied auth change and
  // whenever the engine opens.
  mutable Mutex credentials_mu;
  std::map<std::string, std::string> password_hashes GUARDED_BY(credentials_mu);

  // Alarms (member_alarms.cc). The database size the quota is checked
  // against, read at most once a turn (-1: not yet this turn).
  int64_t quota_db_size GUARDED_BY(member_thread) = -1;
  // This member raises NOSPACE for itself at most once per election
  // timeout while the entry is on its way.
  int64_t next_nospace_raise_ms GUARDED_BY(member_thread) = 0;
  // The leader's corruption check: one round at a time, every
  // options.corrupt_check_interval_ms. `answers` fills in as the members
  // answer (on the member thread); the round ends when all did or at its
  // deadline, and a member that did not answer is unknown, never healthy.
  struct CorruptCheck {
    uint64_t round = 0;  // 0: none running
    int64_t deadline_ms = 0;
    HashKVResponse own;
    std::map<NodeId, std::optional<Result<HashKVResponse>>> answers;
  };
  CorruptCheck corrupt_check GUARDED_BY(member_thread);
  uint64_t corrupt_check_rounds GUARDED_BY(member_thread) = 0;
  int64_t next_corrupt_check_ms GUARDED_BY(member_thread) = 0;
  // Shared with the responders of the hash requests in flight, which may
  // answer after the member is gone (from the transport's thread): they
  // queue their answer only while `impl` is set (cleared at shutdown).
  struct HashAnswers {
    Mutex mu;
    Impl* impl GUARDED_BY(mu) = nullptr;
  };
  std::shared_ptr<HashAnswers> hash_answers = std::make_shared<HashAnswers>();
  class PeerHashResponder;

  // member.cc
  Status Open() REQUIRES(member_thread);
  Status OpenEngine() REQUIRES(member_thread);
  Status OpenRaftStorage() REQUIRES(member_thread);
  Status Found() REQUIRES(member_thread);
  Status CreateRaft() REQUIRES(member_thread);
  void Enqueue(Item item);
  void Loop();
  void Turn(std::vector<Item> batch) REQUIRES(member_thread);
  void Take(Item item, Answers* answers) REQUIRES(member_thread);
  void Deliver(Answers* answers, const Status& committed) REQUIRES(member_thread);
  // The gauges that follow the engine, after a turn's commit.
  void RecordState() REQUIRES(member_thread);
  void Shutdown() REQUIRES(member_thread);

  // member_requests.cc
  ResponseHeader Now() const REQUIRES(member_thread);
  void Answer_(Answers* answers, std::unique_ptr<Request> request, Result<Response> response,
               bool is_write = false) REQUIRES(member_thread);
  void Handle(std::unique_ptr<Request> request, Answers* answers) REQUIRES(member_thread);
  void HandleLocal(std::unique_ptr<Request> request, Answers* answers) REQUIRES(member_thread);
  // Returns whether the answer is held for a checkpoint.
  bool HandleKeepAlive(std::unique_ptr<Request> request, Answers* answers) REQUIRES(member_thread);
  void HandleWrite(std::unique_ptr<Request> request, Answers* answers) REQUIRES(member_thread);
  void HandleMembership(std::unique_ptr<Request> request, Answers* answers) REQUIRES(member_thread);
  void HandleMoveLeader(std::unique_ptr<Request> request, Answers* answers) REQUIRES(member_thread);
  // member_peer_urls.cc
  void HandleMemberUpdate(std::unique_ptr<Request> request, Answers* answers)
      REQUIRES(member_thread);
  void ApplyPeerUrls(const LogCommand& command, const raft::Entry& entry, Answers* answers)
      REQUIRES(member_thread);
  void AnswerMovedLeader(Answers* answers) REQUIRES(member_thread);
  void Forward(std::unique_ptr<Request> request, Answers* answers) REQUIRES(member_thread);
  void Propose(LogCommand command) REQUIRES(member_thread);
  // Proposes `command` as this member's (origin member and sequence) and
  // keeps `request` to answer when it is applied, or at its deadline.
  void ProposeFor(LogCommand command, std::unique_ptr<Request> request) REQUIRES(member_thread);
  void FlushProposals(Answers* answers) REQUIRES(member_thread);
  void ConfirmReads(Answers* answers) REQUIRES(member_thread);
  void ServeConfirmedReads(Answers* answers) REQUIRES(member_thread);
  void RetryWaiting(Answers* answers) REQUIRES(member_thread);
  // Whether the token names an Authenticate entry this member has not
  // applied yet.
  bool TokenAhead(const std::string& token) const REQUIRES(member_thread);

  // member_ready.cc
  void Tick() REQUIRES(member_thread);
  void ProcessReady(Answers* answers) REQUIRES(member_thread);
  void Send(const raft::Message& m) REQUIRES(member_thread);
  void MaybeCompactLog() REQUIRES(member_thread);
  Status CommitEngine() REQUIRES(member_thread);
  void CommitEngineIfDue() REQUIRES(member_thread);
  void LeaveRaft(const Status& cause, Answers* answers) REQUIRES(member_thread);
  void TurnOutOfRaft(std::vector<Item> batch) REQUIRES(member_thread);
  Status InstallSnapshot(const raft::SnapshotMeta& meta) REQUIRES(member_thread);
  SnapshotShipper::Leader ShipperLeader() REQUIRES(member_thread);

  // member_rejoin.cc
  // Called by LeaveRaft: when to try to rejoin.
  void ScheduleRejoin() REQUIRES(member_thread);
  // Out of Raft: once the time comes, tries to become whole again; true
  // when the member is back in Raft.
  bool MaybeRejoin() REQUIRES(member_thread);
  Status Rejoin() REQUIRES(member_thread);
  Status ProbeWrite() REQUIRES(member_thread);

  // member_apply.cc
  void ApplyEntry(const raft::Entry& entry, Answers* answers) REQUIRES(member_thread);
  void ApplyConfChange(const raft::Entry& entry, Answers* answers) REQUIRES(member_thread);
  std::optional<Result<Response>> Remembered(const Request& request) REQUIRES(member_thread);

  // member_auth.cc
  // OK when the request may be served (auth disabled, checked already, or
  // its token's user has the permissions); etcd's error otherwise.
  Status Authorize(Request* request) REQUIRES(member_thread);
  // The user of a token (etcd: an empty token is ErrUserEmpty, an unknown
  // or expired one ErrInvalidAuthToken).
  Result<std::string> UserOfToken(const std::string& token) REQUIRES(member_thread);
  void HandleAuth(std::unique_ptr<Request> request, Answers* answers) REQUIRES(member_thread);
  void ApplyAuthChange(const AuthChange& change, uint64_t index, std::unique_ptr<Request> request,
                       Answers* answers) REQUIRES(member_thread);
  void RefreshCredentials() REQUIRES(member_thread);

  // member_alarms.cc
  // OK, or what the raised alarms or the quota answer the request with
  // before it is served or forwarded (raising NOSPACE for this member when
  // the quota is exceeded).
  Status AlarmGate(const Request& request) REQUIRES(member_thread);
  void HandleAlarm(std::unique_ptr<Request> request, Answers* answers) REQUIRES(member_thread);
  void ApplyAlarmChange(const AlarmChange& change, uint64_t index, std::unique_ptr<Request> request,
                        Answers* answers) REQUIRES(member_thread);
  // Proposes activating `type` for `member` unless it is raised already.
  void RaiseAlarm(AlarmType type, NodeId member) REQUIRES(member_thread);
  // etcd's StatusResponse.errors: one text per raised alarm.
  std::vector<std::string> AlarmErrors() const REQUIRES(member_thread);
  void MaybeCheckCorruption(int64_t now) REQUIRES(member_thread);
  void OnPeerHash(uint64_t round, NodeId peer, Result<HashKVResponse> answer)
      REQUIRES(member_thread);
  void FinishCorruptCheck() REQUIRES(member_thread);

  // member_leader.cc
  void Timers() REQUIRES(member_thread);
  void MaybePublishAttributes(int64_t now) REQUIRES(member_thread);
  void BecameLeader(bool now_leader) REQUIRES(member_thread);
  void MaybeTakeOverLeases() REQUIRES(member_thread);
  void ProposeLeaseCheckpoints(bool scan_all) REQUIRES(member_thread);
  void AnswerHeldRenewals(Answers* answers) REQUIRES(member_thread);
};

}  // namespace natcd::server
