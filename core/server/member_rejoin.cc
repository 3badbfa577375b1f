// Member: coming back into Raft after a storage error (see LeaveRaft in
// member_ready.cc). An operator who frees space on a full disk expects the
// member to serve again by itself, as it would after a restart: so it does
// what a restart does, on a backoff, while it is out.
#include <algorithm>
#include <cstdio>

#include "server/member_impl.h"

namespace natcd::server {
namespace {

// The first try a second after leaving, then twice the wait after each
// failed one, up to ten seconds: a disk freed is noticed soon, and a disk
// still full costs a probe and a log line at most every ten seconds.
constexpr int64_t kRejoinFirstMs = 1'000;
constexpr int64_t kRejoinMaxMs = 10'000;
// A member that fails again this soon after rejoining goes on from the wait
// it had reached, doubled: a disk that takes the probe but fills again at
// once must not make it flap every second.
constexpr int64_t kRejoinSettledMs = 60'000;
// What the probe writes and fdatasyncs: a disk freed takes it, one still
// full (or failing) does not.
constexpr size_t kProbeBytes = 64 << 10;

}  // namespace

void Member::Impl::ScheduleRejoin() {
  const int64_t now = clock->MonotonicMs();
  if (rejoin_backoff_ms == 0 || now - rejoined_at_ms >= kRejoinSettledMs) {
    rejoin_backoff_ms = kRejoinFirstMs;
  } else {
    rejoin_backoff_ms = std::min(rejoin_backoff_ms * 2, kRejoinMaxMs);
  }
  next_rejoin_ms = now + rejoin_backoff_ms;
}

bool Member::Impl::MaybeRejoin() {
  const int64_t now = clock->MonotonicMs();
  if (now < next_rejoin_ms) return false;
  Status s = Rejoin();
  if (s.ok()) return true;
  rejoin_backoff_ms = std::min(rejoin_backoff_ms * 2, kRejoinMaxMs);
  next_rejoin_ms = now + rejoin_backoff_ms;
  fprintf(stderr, "natcd %s: still out of the cluster: %s; trying again in %lld ms\n",
          options.name.c_str(), s.ToString().c_str(), static_cast<long long>(rejoin_backoff_ms));
  return false;
}

// A file beside the log written and made durable, then removed: reopening
// alone proves nothing (it reads, and syncs what is clean already).
Status Member::Impl::ProbeWrite() {
  raftlog::LogFs* fs = options.raft_log_fs != nullptr ? options.raft_log_fs : &log_fs;
  const std::string path =
      raft::DurableRaftStorage::LogDirOf(options.engine.db_path) + "/rejoin-probe";
  Status s;
  {
    Result<std::unique_ptr<raftlog::LogFile>> file = fs->OpenFile(path, /*create=*/true);
    if (!file.ok()) return file.status();
    s = (*file)->Write(0, std::string(kProbeBytes, '\0'));
    if (s.ok()) s = (*file)->Sync();
  }
  Status removed = fs->Remove(path);
  return s.ok() ? removed : s;
}

// What a restart would do: Raft, its storage and the engine opened again
// from what is durable (the database, and the log replayed from its applied
// index: nothing applied twice, nothing acknowledged lost), and Raft starts
// as a follower; the leader catches it up with its log or a snapshot. The
// old engine stays until the new state is whole, so that a failed try
// leaves the member as it was (out, refusing requests, front ends working):
// SQLite lets the two connections share the database for that moment.
Status Member::Impl::Rejoin() {
  NATCD_RETURN_IF_ERROR(ProbeWrite());
  // Nothing of the Ready that failed may come back as durable: no vote
  // cast, no entry acknowledged on it.
  if (raft_storage) NATCD_RETURN_IF_ERROR(raft_storage->DiscardUnsynced());
  raft.reset();
  raft_storage.reset();
  std::unique_ptr<Engine> old_engine = std::move(engine);
  Status s = OpenEngine();
  if (s.ok()) s = OpenRaftStorage();
  if (s.ok()) s = CreateRaft();
  if (!s.ok()) {
    raft.reset();
    raft_storage.reset();
    engine = std::move(old_engine);
    if (engine) RefreshCredentials();
    return s;
  }
  // Its watches were canceled when it left (and every turn since). Without
  // an old engine (a snapshot install that could not reopen it) the front
  // ends are detached already.
  if (old_engine) {
    for (FrontEnd* f : front_ends) f->Detach();
    old_engine.reset();
  }
  for (FrontEnd* f : front_ends) f->Attach(engine.get());
  for (auto& task : tasks_without_engine) task(*engine);
  tasks_without_engine.clear();
  storage_failure = Status::OK();
  continuity.Reset();
  corrupt_check = CorruptCheck{};
  next_tick_ms = 0;
  rejoined_at_ms = clock->MonotonicMs();
  fprintf(stderr,
          "natcd %s: storage works again: rejoined the cluster as a follower, its log at index "
          "%llu (revision %lld)\n",
          options.name.c_str(), static_cast<unsigned long long>(raft_storage->LastIndex()),
          static_cast<long long>(engine->revision()));
  return Status::OK();
}

}  // namespace natcd::server
