#include "raft/sim/sim_network.h"

namespace natcd::raft::sim {

void SimNetwork::Send(Packet packet, int64_t now) {
  sent_++;
  if (faulty_ && Chance(faults_.drop)) {
    dropped_++;
    return;
  }
  const int copies =
      faulty_ && packet.kind != Packet::Kind::kClient && Chance(faults_.duplicate) ? 2 : 1;
  for (int i = 0; i < copies; i++) {
    const int64_t delay = faulty_ && Chance(faults_.slow) ? Rand(20, 200) : Rand(1, 15);
    in_flight_.emplace(std::make_pair(now + delay, ++seq_),
                       i + 1 < copies ? packet : std::move(packet));
  }
}

std::optional<Packet> SimNetwork::NextDue(int64_t now) {
  if (in_flight_.empty() || in_flight_.begin()->first.first > now) return std::nullopt;
  Packet packet = std::move(in_flight_.begin()->second);
  in_flight_.erase(in_flight_.begin());
  return packet;
}

}  // namespace natcd::raft::sim
