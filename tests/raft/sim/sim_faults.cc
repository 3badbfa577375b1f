// Fault injection: crashes and partitions, per step (simulation_impl.h).
#include "raft/sim/simulation_impl.h"

namespace natcd::raft::sim {

// ---------------------------------------------------------------------------
// Faults

void Simulation::InjectFaults() {
  if (heal_partition_at_ != 0 && now_ >= heal_partition_at_) {
    Trace("partition heals");
    network_.HealPartitions();
    heal_partition_at_ = 0;
  }
  if (Chance(crash_p_)) {
    std::vector<SimMember*> alive = Alive();
    // A restart is not how a member with a full disk comes back here.
    std::erase_if(alive, [](SimMember* m) { return m->disk_full(); });
    if (!alive.empty()) {
      result_.stats.crashes++;
      SimMember* victim = alive[Rand(0, alive.size() - 1)];
      Crash(*victim, options_.vfs != nullptr && Chance(power_loss_p_));
    }
  }
  if (heal_partition_at_ == 0 && Chance(partition_p_)) Partition();
  if (options_.disk_full > 0 && Chance(options_.disk_full)) FillDisk();
}

// One member's Raft log stops taking writes (ENOSPC) for a while.
void Simulation::FillDisk() {
  std::vector<SimMember*> candidates = Alive();
  std::erase_if(candidates, [](SimMember* m) { return m->log_fs == nullptr || m->disk_full(); });
  if (candidates.empty()) return;
  SimMember& m = *candidates[Rand(0, candidates.size() - 1)];
  m.log_fs->set_full(true);
  m.disk_free_at = now_ + Rand(200, 4'000);
  m.disk_freed_at = 0;
  result_.stats.disk_fulls++;
  if (m.member->is_leader()) result_.stats.disk_full_leaders++;
  Trace("%s's disk is full%s", m.name.c_str(), m.member->is_leader() ? " (the leader)" : "");
}

void Simulation::FreeDisk(SimMember& m) {
  m.log_fs->set_full(false);
  m.disk_free_at = 0;
  m.disk_freed_at = now_;
  Trace("%s's disk has room again", m.name.c_str());
}

// Disks freed when their time comes (all of them once healing), and how
// long each member took to know a leader again.
void Simulation::FollowDisks() {
  for (auto& [id, m] : members_) {
    if (m->disk_full() && (!faulty_ || now_ >= m->disk_free_at)) FreeDisk(*m);
    if (m->disk_freed_at != 0 && m->up() && m->member->leader() != 0) {
      result_.stats.slowest_rejoin_ms =
          std::max(result_.stats.slowest_rejoin_ms, now_ - m->disk_freed_at);
      m->disk_freed_at = 0;
    }
  }
}

void Simulation::Partition() {
  std::vector<NodeId> ids;
  for (auto& [id, m] : members_) {
    if (!m->removed) ids.push_back(id);
  }
  std::shuffle(ids.begin(), ids.end(), rng_);
  const int shape = static_cast<int>(Rand(0, 3));
  const size_t cut =
      shape == 0 ? 1 : static_cast<size_t>(Rand(1, std::max<int64_t>(1, ids.size() - 1)));
  std::set<NodeId> side(ids.begin(), ids.begin() + std::min(cut, ids.size()));
  for (NodeId a : ids) {
    for (NodeId b : ids) {
      if (a == b) continue;
      if (shape == 3) {
        // A random half of the links, each direction on its own.
        if (Chance(0.5)) network_.Block(a, b);
        continue;
      }
      if (side.count(a) == side.count(b)) continue;
      // shape 2: one way only (the side can send, not receive)
      if (shape == 2 && side.count(a)) continue;
      network_.Block(a, b);
    }
  }
  heal_partition_at_ = now_ + Rand(100, 2'500);
  result_.stats.partitions++;
  Trace("partition shape %d, %zu on one side", shape, side.size());
}

}  // namespace natcd::raft::sim
