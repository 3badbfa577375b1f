// WatchStreams: watches delivered over NATS. Each watch publishes
// WatchResponse messages to its client's deliver_subject, numbered by seq
// (1, 2, 3... no gaps). The client acknowledges cumulatively (WatchAck
// {watch_id, seq}); at most window messages are unacknowledged, so what a
// watch has in flight is bounded. Beyond that the events wait in the watch
// hub's bounded queue, and a watch whose queue overflows is canceled with
// "slow consumer".
//
// Coalescing, when a delivery round has at least coalesce_ready_min watches
// with something to send: while a watch has a message unacknowledged, its
// next events wait, for the acknowledgement or for coalesce_ms after that
// message, and then go out together; a full message (message_events_max
// events) and progress notifications never wait. Busy watches then get
// fewer, bigger messages instead of one per engine turn each, which costs
// the clients, the NATS server and natcd (one send and one acknowledgement
// per message) less for the same events: with 100 watchers of one prefix,
// a third more events per second and half the p99 lag. With few watches
// busy the messages cost little and the wait for an acknowledgement would
// only add latency. The bound on the wait keeps the added latency small and
// still shows a client whose message was lost the seq gap soon.
//
// Liveness: a watch with nothing to send for heartbeat_ms gets a progress
// message (which must be acknowledged too); a watch whose oldest
// unacknowledged message is older than ack_timeout_ms is reclaimed (its
// client is gone), so a vanished client costs at most heartbeat_ms +
// ack_timeout_ms of server memory.
//
// Watch groups (PROTOCOL.md, "Watch groups"), for watches created with
// `group`: synced watches of the same shape (range, filters, prev_kv,
// progress_notify, encoding) share one hub watcher whose messages are
// published once, on the group's subject, numbered by group_seq. A watch
// first catches up on its own subject; once drained (WatchHub::Drained) it
// is offered the group; once its client acks having subscribed, and both
// the watch and the group are drained at the same revision R, it gets a
// join message (R and the group_seq N of the next group message) and its
// own hub watcher goes: from then on it costs natcd an entry in members_,
// and a group message costs one publish however many members it has. The
// group subject has no window: nats-server's slow-consumer handling
// protects the other members, and a member that sees a group_seq gap
// resumes with a new watch. Members prove they are alive by acknowledging
// the group's heartbeats (sent every heartbeat_ms, busy or not); one silent
// for ack_timeout_ms + heartbeat_ms (it can only ack a heartbeat) is
// reclaimed, and a group without members or watches about to join is
// removed. Per group natcd holds one hub watcher and a stream's counters;
// per member an entry in members_; nothing per message and subscriber.
//
// Engine thread only.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "adapters/nats/codec/convert.h"
#include "natcd/clock.h"
#include "natcd/watch_hub.h"

namespace natcd::nats {

struct WatchStreamOptions {
  size_t window_messages = 64;
  size_t message_events_max = 1'000;
  // The longest a watch's events wait for an acknowledgement before they
  // are sent anyway (window permitting); 0: no coalescing. A healthy client
  // on the same NATS acknowledges well within it; the bound matters when
  // clients or the server are saturated: with 1,000 watchers (paced writer)
  // 25 ms delivered 1.3-1.9x the events of 10 ms, with lower p99 lag (50 ms
  // more still, but it is also what a client far away may wait).
  int64_t coalesce_ms = 25;
  // Coalesce only in rounds with at least this many watches to serve.
  size_t coalesce_ready_min = 8;
  int64_t heartbeat_ms = 5'000;
  int64_t ack_timeout_ms = 15'000;
};

class WatchStreams {
 public:
  // prefix: the subject prefix, for group subjects.
  WatchStreams(natsConnection* nc, WatchHub* hub, EventSource* source, Clock* clock,
               WatchStreamOptions options, HeaderInfo header, std::string prefix);

  // Registers a watch the hub has just created. delivered_revision: the
  // revision the client has everything up to (start_revision - 1, or the
  // current revision for a watch from "now"). group: the watch's options
  // when it asked to join a group (null: it did not).
  void Add(WatchId id, std::string deliver_subject, bool json, int64_t delivered_revision = 0,
           const WatchOptions* group = nullptr);
  // A watch of a client: on its own stream or a member of a group.
  bool Has(WatchId id) const { return streams_.count(id) != 0 || members_.count(id) != 0; }
  // Cumulative acknowledgement of every message up to seq. With
  // group_subscribed: the client subscribed the offered group group_id.
  // From a member (group_id its group): it is alive.
  void Ack(WatchId id, uint64_t seq, bool group_subscribed = false, int64_t group_id = 0);
  // Forgets a watch (the front end canceled its hub watcher, if any).
  void Remove(WatchId id);
  // etcd's RequestProgress for a client's watch; for a member, on its group
  // (every member then gets the truthful notification).
  Status RequestProgress(WatchId id);

  // Publishes what the hub has for every watch with room in its window
  // (for every watch when ignore_window: at shutdown, so that every client
  // gets its "server shutting down" cancel message).
  void Deliver(bool ignore_window = false);
  // Heartbeats and reclaiming of watches whose client is gone.
  void Tick();

  size_t size() const { return streams_.size() + members_.size(); }
  size_t groups() const { return groups_.size(); }
  size_t members() const { return members_.size(); }

 private:
  // Everything that shapes a delivery: watches alike in all of it may share
  // one.
  struct GroupKey {
    std::string key;
    std::string range_end;
    bool no_put = false;
    bool no_delete = false;
    bool prev_kv = false;
    bool progress_notify = false;
    bool json = false;
    auto Tie() const {
      return std::tie(key, range_end, no_put, no_delete, prev_kv, progress_notify, json);
    }
    bool operator<(const GroupKey& other) const { return Tie() < other.Tie(); }
  };
  struct Stream {
    std::string deliver_subject;
    bool json = false;
    uint64_t next_seq = 1;
    // Sent but not acknowledged: (seq, sent at ms), oldest first.
    std::deque<std::pair<uint64_t, int64_t>> unacked;
    int64_t last_sent_ms = 0;
    // Every event of the watch up to this revision was published to the
    // client (the resume point minus one, named in a reclaim message).
    int64_t delivered_revision = 0;
    // A group's stream: messages carry group_id and group_seq, and are not
    // acknowledged.
    bool group = false;
    // A watch that asked for a group: its shape, the group it was offered
    // (0: none yet) and whether its client subscribed it.
    std::optional<GroupKey> group_key;
    WatchId offered_group = 0;
    bool subscribed = false;
  };
  struct Group {
    GroupKey key;
    Stream stream;
    size_t members = 0;
    size_t offered = 0;  // watches offered the group, not yet members
    int64_t last_heartbeat_ms = 0;
  };
  // A watch handed over to a group: what remains of it.
  struct Member {
    WatchId group = 0;
    std::string deliver_subject;
    bool json = false;
    uint64_t next_seq = 0;  // on its own subject, for a reclaim message
    int64_t last_ack_ms = 0;
  };

  // Publishes one hub message (split into fragments when it would exceed the
  // server's max payload; an event too big even alone goes without prev_kv).
  // Returns false when the watch had to end: an event that cannot fit in a
  // message at all (the cancel message says which revision).
  bool Send(WatchId id, Stream& stream, const WatchMessage& message);
  // The event as WatchResponse.events bytes (protobuf: tag, length, event;
  // JSON: the event object), encoded once per Deliver round.
  const std::string& EncodedEvent(const Event& event, bool prev_kv, bool json);
  void Publish(Stream& stream, const std::string& body);
  // Offers, joins and reclaims: a message without events on the watch's own
  // subject (a truthful progress notification to a client that ignores the
  // group fields).
  void SendControl(WatchId id, Stream& stream, int64_t revision, const std::string& group_subject,
                   WatchId group_id, uint64_t group_seq);
  // Offers and hand-overs for the watches waiting to join a group.
  void HandOver();
  // Sends the watch an offer of the group of its shape (made at revision
  // when there is none).
  void Offer(WatchId id, Stream& stream, int64_t revision);
  // The watch no longer waits for group_id (it went or the group did).
  void Unoffer(WatchId group_id);
  // One member fewer; a group without members or offers goes.
  void Leave(WatchId group_id);
  void ReclaimIfUnused(WatchId group_id);
  // The group's hub watcher ended (its cancel message was published): its
  // members go (their clients resume), its offers are void.
  void EndGroup(WatchId group_id);
  // Forgets a client's watch that has its own stream.
  void EraseStream(std::map<WatchId, Stream>::iterator it);

  natsConnection* nc_;
  WatchHub* hub_;
  EventSource* source_;
  Clock* clock_;
  WatchStreamOptions options_;
  HeaderInfo header_;
  std::string prefix_;
  std::mt19937_64 rng_;
  std::map<WatchId, Stream> streams_;
  // Watch groups, by their hub watcher (the group ID).
  std::map<WatchId, Group> groups_;
  std::map<GroupKey, WatchId> group_by_key_;
  std::map<WatchId, Member> members_;
  // Streams with a group_key: waiting for an offer or to join.
  std::set<WatchId> joining_;
  // Encoded events of the current Deliver round, by (event, prev_kv | json << 1).
  std::map<std::pair<const Event*, uint8_t>, std::string> encoded_;
};

}  // namespace natcd::nats
