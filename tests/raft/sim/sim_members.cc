// The simulated members: started, crashed, found (simulation_impl.h).
#include "raft/sim/simulation_impl.h"

namespace natcd::raft::sim {

// ---------------------------------------------------------------------------
// Members

SimMember& Simulation::NewMember(const std::string& name, bool founder,
                                 std::vector<std::string> cluster) {
  auto m = std::make_unique<SimMember>();
  m->name = name;
  m->id = server::MemberIdOf(name);
  m->dir = root_ + "/" + name;
  std::filesystem::create_directories(m->dir);
  // Each member's clock has its own epoch (and so its own wall clock, a
  // little off the others').
  m->clock = std::make_unique<ManualClock>(1'000'000 + Rand(0, 400));
  server::MemberOptions& o = m->options;
  o.name = name;
  o.member_id = m->id;
  o.cluster_id = 1;
  o.engine.db_path = m->dir + "/natcd.db";
  o.raft_log_segment_bytes = 64 << 10;  // zero-filled when made; rotations too
  o.engine.sync = options_.vfs != nullptr;
  if (options_.vfs != nullptr) {
    m->log_fs = std::make_unique<raftlog::testing::FaultLogFs>();
    o.raft_log_fs = m->log_fs.get();
  }
  o.engine.clock = m->clock.get();
  o.engine.seed = rng_();
  // Where the SQLite batch commits varies by member and seed (etcd's 100 ms
  // and 10,000 entries, or much smaller batches), so that crashes and power
  // losses land before, inside and after batches of every size.
  o.engine.batch_interval_ms = Rand(0, 1) == 0 ? 100 : Rand(1, 300);
  o.engine.batch_limit = Rand(0, 1) == 0 ? 10'000 : static_cast<size_t>(Rand(1, 20));
  o.engine.lease_ttl_s_min = 1;
  o.engine.lease_expire_retry_ms = 500;
  o.lease_check_interval_ms = 50;
  o.lease_checkpoint_interval_ms = 500;
  o.initial_cluster = std::move(cluster);
  o.new_cluster = founder;
  o.heartbeat_interval_ms = kHeartbeatMs;
  o.election_timeout_ms = kElectionMs;
  o.request_timeout_ms = kRequestTimeoutMs;
  o.snapshot_entries = snapshot_entries_;
  o.snapshot_catchup_entries = snapshot_catchup_entries_;
  o.copy_snapshots_on_member_thread = true;
  SimMember& ref = *m;
  members_[ref.id] = std::move(m);
  return ref;
}

void Simulation::Start(SimMember& m) {
  m.incarnation++;
  Result<std::unique_ptr<server::Member>> opened = server::Member::Open(m.options);
  if (!opened.ok()) {
    Fail(m.name + " does not open: " + opened.status().ToString());
    return;
  }
  m.sink = std::make_unique<SimEventSink>(&event_log_, m.id);
  m.transport = std::make_unique<SimPeerTransport>(m.id, m.incarnation, &network_, &now_,
                                                   m.clock.get(), kRequestTimeoutMs);
  m.member = std::move(opened).value();
  m.transport->set_member(m.member.get());
  m.member->SetPeerTransport(m.transport.get());
  m.member->SetEventSink(m.sink.get());
  m.serializable_revision = 0;
  Trace("%s starts (incarnation %llu)", m.name.c_str(),
        static_cast<unsigned long long>(m.incarnation));
}

void Simulation::Crash(SimMember& m, bool power_loss) {
  if (!m.up()) return;
  Trace("%s crashes%s", m.name.c_str(), power_loss ? ", power lost" : "");
  // A power loss keeps of each file what its last fsync made durable,
  // taken now (closing the database below writes and syncs more).
  std::map<std::string, std::string> durable;
  if (power_loss) {
    for (const auto& entry : std::filesystem::directory_iterator(m.dir)) {
      const std::string path = entry.path().string();
      // The WAL index is rebuilt from the WAL by the first connection.
      if (!entry.is_regular_file() || path.size() < 4 || path.ends_with("-shm")) continue;
      Result<std::string> contents = options_.vfs->DurableContents(path);
      if (!contents.ok()) {
        Fail("power loss: " + contents.status().ToString());
        return;
      }
      std::ifstream now_in(path, std::ios::binary);
      const std::string now_contents((std::istreambuf_iterator<char>(now_in)),
                                     std::istreambuf_iterator<char>());
      if (now_contents != *contents) {
        Trace(
            "%s loses %lld unsynced bytes of %s", m.name.c_str(),
            static_cast<long long>(now_contents.size()) - static_cast<long long>(contents->size()),
            entry.path().filename().c_str());
        result_.stats.power_losses_losing_data++;
      }
      durable[path] = std::move(contents).value();
    }
  }
  result_.stats.forwards += m.transport->forwards();
  result_.stats.resubmits += m.transport->resubmits();
  result_.stats.snapshots_sent += m.transport->snapshot_messages();
  m.member->TEST_Crash();
  m.disk_freed_at = 0;  // back through a restart, not by rejoining
  m.member.reset();
  m.transport.reset();
  m.sink.reset();
  m.restart_at = now_ + Rand(200, 2'500);
  if (!power_loss) return;
  result_.stats.power_losses++;
  for (const auto& entry : std::filesystem::directory_iterator(m.dir)) {
    std::error_code ec;
    if (entry.is_regular_file()) std::filesystem::remove(entry.path(), ec);
  }
  for (const auto& [path, contents] : durable) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) Fail("power loss: cannot write back " + path);
  }
  options_.vfs->ForgetUnsyncedDataUnder(m.dir + "/");
  // And of the Raft log file, what was written since its last fdatasync.
  if (m.log_fs != nullptr) {
    if (m.log_fs->unsynced_bytes() > 0) {
      Trace("%s loses %llu unsynced bytes of its Raft log", m.name.c_str(),
            static_cast<unsigned long long>(m.log_fs->unsynced_bytes()));
      result_.stats.power_losses_losing_data++;
    }
    std::mt19937 lose(static_cast<uint32_t>(rng_()));
    m.log_fs->LosePower(&lose);
  }
}

std::vector<SimMember*> Simulation::Alive() {
  std::vector<SimMember*> out;
  for (auto& [id, m] : members_) {
    if (m->up()) out.push_back(m.get());
  }
  return out;
}

SimMember* Simulation::Leader() {
  SimMember* best = nullptr;
  for (auto& [id, m] : members_) {
    if (m->up() && m->member->is_leader() &&
        (best == nullptr || m->member->raft_term() > best->member->raft_term())) {
      best = m.get();
    }
  }
  return best;
}

SimMember* Simulation::RandomMember() {
  std::vector<SimMember*> out;
  for (auto& [id, m] : members_) {
    if (!m->removed) out.push_back(m.get());
  }
  return out.empty() ? nullptr : out[Rand(0, out.size() - 1)];
}

}  // namespace natcd::raft::sim
