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
    if (!alive.empty()) {
      result_.stats.crashes++;
      SimMember* victim = alive[Rand(0, alive.size() - 1)];
      Crash(*victim, options_.vfs != nullptr && Chance(power_loss_p_));
    }
  }
  if (heal_partition_at_ == 0 && Chance(partition_p_)) Partition();
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
