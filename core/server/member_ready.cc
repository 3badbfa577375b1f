// Member: the one Ready loop, ticks, log compaction, installing a snapshot
// from the leader, and leaving Raft when persisting fails (see member_impl.h).
#include <algorithm>
#include <cstdio>
#include <optional>

#include "server/member_impl.h"
#include "storage/durable_file.h"

namespace natcd::server {
namespace {

std::string Hex(NodeId id) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

}  // namespace

void Member::Impl::Tick() {
  const int64_t now = clock->MonotonicMs();
  if (next_tick_ms == 0) next_tick_ms = now + options.heartbeat_interval_ms;
  // A turn that took longer than a tick catches up (bounded: a long stall
  // must not become a burst of elections).
  for (int i = 0; i < 3 && now >= next_tick_ms; i++) {
    raft->Tick();
    next_tick_ms += options.heartbeat_interval_ms;
  }
  if (now >= next_tick_ms) next_tick_ms = now + options.heartbeat_interval_ms;
}

void Member::Impl::Send(const raft::Message& m) {
  if (transport == nullptr || !transport->SendRaft(m)) raft->ReportUnreachable(m.to);
}

SnapshotShipper::Leader Member::Impl::ShipperLeader() {
  return SnapshotShipper::Leader{raft.get(), raft_storage.get(), &membership.history(),
                                 [this](const raft::Message& m) {
                                   member_thread.AssertHeld();  // the shipper runs in a turn
                                   Send(m);
                                 }};
}

// Persist, send (a leader's appends before its own fsync), apply, commit,
// Advance: etcd-raft's protocol (doc.go), once per Ready, a few Readies a
// turn.
void Member::Impl::ProcessReady(Answers* answers) {
  for (int round = 0; round < 16 && raft->HasReady(); round++) {
    raft::Ready rd = raft->GetReady();
    // A leader sends its appends and heartbeats before its own fsync, so
    // the followers write in parallel with it (Raft thesis 10.2.1). Safe
    // because an acknowledgement is only counted in a later turn of this
    // loop, after this fsync; and the commit index they carry only counts
    // entries already durable here. Everything else (votes,
    // acknowledgements) waits for the fsync.
    if (raft->role() == raft::Role::kLeader) {
      for (raft::Message& m : rd.messages) {
        if (m.type == raft::MessageType::kApp || m.type == raft::MessageType::kHeartbeat) {
          Send(m);
          m.to = raft::kNoNode;  // sent
        }
      }
    }
    const bool applies_conf_change =
        std::any_of(rd.committed_entries.begin(), rd.committed_entries.end(),
                    [](const raft::Entry& e) { return e.type == raft::EntryType::kConfChange; });
    Status s;
    if (!rd.snapshot.empty() && rd.snapshot.meta.index > 1) {
      // The leader's database arrived whole (see Take): it becomes this
      // member's, and Raft starts again from it (this Ready is void).
      s = InstallSnapshot(rd.snapshot.meta);
      if (!s.ok()) {
        fprintf(stderr, "natcd %s: installing the snapshot failed: %s\n", options.name.c_str(),
                s.ToString().c_str());
        // Without its Raft (or engine) reopened: out, until it can be.
        if (raft == nullptr) LeaveRaft(s, answers);
      }
      return;
    }
    if (!rd.snapshot.empty()) {
      // The cluster's first snapshot: the empty state this new member
      // already has. (Its row needs a batch of its own.)
      s = CommitEngine();
      if (s.ok()) s = raft_storage->ApplySnapshot(rd.snapshot.meta);
      applied_index = snapshot_index = rd.snapshot.meta.index;
    }
    // Raft needs term and vote durable. The commit index only has to cover
    // the membership changes applied: a restarted member re-applies the
    // log from its snapshot up to it, and its configuration must not fall
    // back to one without them (the simulation finds clusters that can
    // never elect a leader again otherwise). Past that it is a hint, learned
    // again from the leader (or as a sole voter from its own next entry),
    // and the engine skips the entries it already applied when Raft hands
    // them back. So a Ready that only moves the commit index leaves the
    // stored hard state alone: a record less in the write of every Ready.
    std::optional<raft::HardState> hard_state;
    if ((rd.hard_state && (rd.hard_state->term != synced_hard_state.term ||
                           rd.hard_state->vote != synced_hard_state.vote)) ||
        applies_conf_change) {
      hard_state = raft->hard_state();
    }
    // A Ready that only applies committed entries (and moves the commit
    // index) needs no fsync: those entries are durable in the log already,
    // and a crash would apply them again.
    const bool syncs = !rd.entries.empty() || hard_state.has_value();
    // One write and one fdatasync of the log file: the entries and the
    // hard state are durable before any message or answer depends on them.
    if (s.ok() && syncs) {
      const int64_t start_ns = clock->MonotonicNs();
      s = raft_storage->Persist(rd.entries, hard_state, syncs);
      if (s.ok() && options.metrics != nullptr) {
        int64_t bytes = 0;
        for (const raft::Entry& e : rd.entries) bytes += static_cast<int64_t>(e.data.size());
        options.metrics->wal_write_bytes.Add(static_cast<double>(bytes));
        const double seconds = static_cast<double>(clock->MonotonicNs() - start_ns) / 1e9;
        if (syncs) options.metrics->wal_fsync_seconds.Observe(seconds);
      }
    }
    if (s.ok()) {
      for (const raft::Entry& e : rd.committed_entries) {
        ApplyEntry(e, answers);
        applied_index = e.index;
      }
      MaybeTakeOverLeases();
    }
    // What the entries produced goes to the watch hub now; the SQLite
    // commit comes in batches (CommitEngineIfDue), after the answers: a
    // crash before it loses nothing, since a restart applies the entries
    // again from the log, from the database's applied index on
    // (raft/durable_raft_storage.h).
    if (s.ok()) s = engine->Publish();
    if (s.ok() && rd.hard_state) synced_hard_state = *rd.hard_state;
    if (!s.ok()) {
      LeaveRaft(s, answers);
      // Retryable: the entries may still commit through the others (they
      // were sent before this fsync), and a retry with the same request id
      // is applied once.
      for (Answer& a : *answers) {
        if (a.is_write && a.response.ok()) a.response = storage_failure;
      }
      return;
    }
    for (raft::Message& m : rd.messages) {
      if (m.to == raft::kNoNode) continue;  // sent before the fsync
      if (m.type == raft::MessageType::kSnap) {
        // The cluster's first snapshot is the empty state: a new member
        // installs it and gets everything else from the log. Any later one
        // means shipping this member's database first.
        if (m.snapshot.meta.index != 1 || raft_storage->booted_over_existing_data()) {
          // The copy is taken on another connection: of what is committed.
          // (A failed commit stops the engine; the turn then leaves Raft.)
          (void)CommitEngine();
          shipper.Start(std::move(m));
          continue;
        }
        raft->ReportSnapshot(m.to, /*failed=*/false);
      }
      Send(m);
    }
    reads.OnReadStates(rd.read_states);
    if (rd.soft_state) {
      fprintf(stderr, "natcd %s: %s, term %llu, leader %s\n", options.name.c_str(),
              raft::RoleName(rd.soft_state->role), static_cast<unsigned long long>(raft->term()),
              rd.soft_state->lead ? Hex(rd.soft_state->lead).c_str() : "none");
      lead_now.store(rd.soft_state->lead);
      if (metrics::MemberMetrics* m = options.metrics) {
        m->has_leader.Set(rd.soft_state->lead != raft::kNoNode ? 1 : 0);
        m->is_leader.Set(rd.soft_state->role == raft::Role::kLeader ? 1 : 0);
        if (rd.soft_state->lead != raft::kNoNode && rd.soft_state->lead != metrics_lead) {
          m->leader_changes.Inc();
          metrics_lead = rd.soft_state->lead;
        }
      }
      BecameLeader(rd.soft_state->role == raft::Role::kLeader);
    }
    raft->Advance(rd);
  }
  raft_term = raft->term();
  term_now.store(raft_term);
  if (metrics::MemberMetrics* m = options.metrics) {
    m->proposals_committed.Set(static_cast<double>(raft->committed()));
    m->proposals_applied.Set(static_cast<double>(applied_index));
  }
  AnswerHeldRenewals(answers);
  ServeConfirmedReads(answers);
  AnswerMovedLeader(answers);
  MaybeCompactLog();
}

// The engine's open batch committed to SQLite now, timed as etcd's
// backend commit.
Status Member::Impl::CommitEngine() {
  const bool open = engine->batch_open();
  const int64_t start_ns = clock->MonotonicNs();
  Status s = engine->Commit();
  if (s.ok() && open && options.metrics != nullptr) {
    const double seconds = static_cast<double>(clock->MonotonicNs() - start_ns) / 1e9;
    options.metrics->backend_commit_seconds.Observe(seconds);
  }
  return s;
}

// The batched commit: once the batch has been open the batch interval or
// holds the batch limit of entries (ticks bring an idle member here too).
// Its entries were answered already, durable in the log; a failed commit
// takes the member out of Raft, and a restart applies them again.
void Member::Impl::CommitEngineIfDue() {
  if (!engine->CommitDue()) return;
  Status s = CommitEngine();
  if (s.ok()) return;
  Answers answers;
  LeaveRaft(s, &answers);
  Deliver(&answers, s);
}

// A member that cannot persist leaves Raft until its storage works again
// (member_rejoin.cc): no more ticks, no message in or out. A leader that
// went on sending heartbeats (they leave before its fsync) while nothing
// could be made durable held the cluster hostage: no write committed, and no follower, hearing from
// it, campaigned. Silent, it is to the others what a crashed member is:
// they elect a leader among themselves within an election timeout. It
// casts no vote and acknowledges nothing either: both would claim a
// durability it does not have. (etcd exits on a failed WAL write; natcd
// stays up to say why: every request is refused with a retryable
// ErrStopped naming the error, so clients go to another member; and to
// come back by itself once space is freed.)
void Member::Impl::LeaveRaft(const Status& cause, Answers* answers) {
  storage_failure =
      cause.name() == "ErrStopped"
          ? cause
          : Status::Unavailable("ErrStopped", "etcdserver: server stopped after a storage error: " +
                                                  cause.ToString());
  ScheduleRejoin();
  fprintf(stderr, "natcd %s: %s; out of the cluster, trying to rejoin in %lld ms\n",
          options.name.c_str(), storage_failure.ToString().c_str(),
          static_cast<long long>(next_rejoin_ms - clock->MonotonicMs()));
  auto refuse = [&](std::vector<std::unique_ptr<Request>> requests) {
    member_thread.AssertHeld();
    for (auto& request : requests) Answer_(answers, std::move(request), storage_failure);
  };
  refuse(proposals.TakeAll());
  refuse(std::move(waiting_for_leader));
  waiting_for_leader.clear();
  refuse(std::move(waiting_for_token));
  waiting_for_token.clear();
  for (auto& moving : moving_leader) Answer_(answers, std::move(moving.request), storage_failure);
  moving_leader.clear();
  refuse(reads.TakeAll());
  refuse(held_renewals.TakeAll());
  turn_entries.clear();
  turn_commands.clear();
  turn_seqs.clear();
  // Its leader weight goes (front ends' LeadershipChanged), its leases are
  // no longer its to expire.
  BecameLeader(false);
  lead_now.store(raft::kNoNode);
  if (metrics::MemberMetrics* m = options.metrics) {
    m->has_leader.Set(0);
    m->is_leader.Set(0);
  }
  // Their clients resume on another member.
  if (engine) engine->watches().CancelAll(std::string(storage_failure.message()));
}

// A turn out of Raft: requests are refused, front-end operations answer for
// themselves, Raft messages and snapshot chunks are dropped.
void Member::Impl::TurnOutOfRaft(std::vector<Item> batch) {
  if (MaybeRejoin()) {
    Turn(std::move(batch));
    return;
  }
  Answers answers;
  for (Item& item : batch) {
    if (item.kind == Item::Kind::kRequest) {
      Answer_(&answers, std::move(item.request), storage_failure);
    } else if (item.kind == Item::Kind::kTask && engine) {
      item.task(*engine);
    } else if (item.kind == Item::Kind::kTask) {
      tasks_without_engine.push_back(std::move(item.task));  // run once it opens
    }
  }
  Deliver(&answers, Status::OK());
  // A watch created meanwhile could never be synced: ended at once.
  if (engine) engine->watches().CancelAll(std::string(storage_failure.message()));
  for (FrontEnd* f : front_ends) f->AfterTurn();
}

void Member::Impl::MaybeCompactLog() {
  if (applied_index < snapshot_index + options.snapshot_entries) return;
  // The state machine's snapshot is the database itself: only record how
  // far it is, and keep some entries for members a little behind.
  raft::SnapshotMeta meta;
  meta.index = applied_index;
  meta.conf_state = raft->conf_state();
  const uint64_t compact_to = applied_index > options.snapshot_catchup_entries
                                  ? applied_index - options.snapshot_catchup_entries
                                  : 0;
  // The open batch first: CreateSnapshot commits its row with an fsync in
  // a batch of its own, which makes the batch durable too before the log
  // drops the entries that produced it.
  if (!CommitEngine().ok()) return;
  Status s = raft_storage->CreateSnapshot(meta, compact_to);
  if (s.ok()) {
    snapshot_index = applied_index;
  } else {
    fprintf(stderr, "natcd %s: compacting the Raft log: %s\n", options.name.c_str(),
            s.ToString().c_str());
  }
}

Status Member::Impl::InstallSnapshot(const raft::SnapshotMeta& meta) {
  // Term and vote stay in the log file; the database's snapshot row
  // becomes meta, and opening the Raft storage makes the log agree with it
  // (replaced, unless it holds meta's entry), with the commit index at
  // least meta's.
  // Should the install fail, the old database stays: with all it applied.
  NATCD_RETURN_IF_ERROR(CommitEngine());
  if (options.metrics) options.metrics->snapshot_apply_in_progress.Set(1);
  // Everything built on the old database goes: watches end with a reason
  // (clients re-create them from their last revision + 1).
  engine->watches().CancelAll("member restored from the leader's snapshot");
  for (FrontEnd* f : front_ends) f->Detach();
  raft.reset();
  raft_storage.reset();
  engine.reset();
  const std::string received = shipper.received_path();
  Status s = raft::DurableRaftStorage::PrepareReceivedSnapshot(received, meta);
  if (s.ok()) {
    const std::string& db = options.engine.db_path;
    s = RemoveFileIfExists(db + "-wal");
    if (s.ok()) s = RemoveFileIfExists(db + "-shm");
    if (s.ok()) s = RenameDurably(received, db);
  }
  shipper.ForgetReceived();
  // Whether it worked or not, open what is there (a failed install left the
  // old database in place) and go on; if that fails too, the member leaves
  // Raft and opens it all again once it can (member_rejoin.cc).
  NATCD_RETURN_IF_ERROR(OpenEngine());
  for (FrontEnd* f : front_ends) f->Attach(engine.get());
  NATCD_RETURN_IF_ERROR(OpenRaftStorage());
  NATCD_RETURN_IF_ERROR(CreateRaft());
  leader = false;
  leader_now.store(false);
  continuity.Reset();
  if (options.metrics) options.metrics->snapshot_apply_in_progress.Set(0);
  fprintf(stderr, "natcd %s: installed the leader's snapshot at index %llu (revision %lld)\n",
          options.name.c_str(), static_cast<unsigned long long>(meta.index),
          static_cast<long long>(engine->revision()));
  return s;
}

}  // namespace natcd::server
