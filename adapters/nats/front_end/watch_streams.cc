#include "adapters/nats/front_end/watch_streams.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "adapters/nats/codec/subject.h"
#include "adapters/nats/codec/wire.h"
#include "adapters/nats/front_end/reply.h"

namespace natcd::nats {
namespace {

// Room left in a message for everything but the events.
constexpr size_t kMessageOverheadBytes = 1024;

}  // namespace

WatchStreams::WatchStreams(natsConnection* nc, WatchHub* hub, EventSource* source, Clock* clock,
                           WatchStreamOptions options, HeaderInfo header, std::string prefix)
    : nc_(nc),
      hub_(hub),
      source_(source),
      clock_(clock),
      options_(options),
      header_(header),
      prefix_(std::move(prefix)),
      rng_(std::random_device{}()) {}

void WatchStreams::Add(WatchId id, std::string deliver_subject, bool json,
                       int64_t delivered_revision, const WatchOptions* group) {
  Stream& stream = streams_[id];
  stream.deliver_subject = std::move(deliver_subject);
  stream.json = json;
  stream.last_sent_ms = clock_->MonotonicMs();
  stream.delivered_revision = delivered_revision;
  if (group != nullptr) {
    stream.group_key =
        GroupKey{group->key,     group->range_end,       group->no_put, group->no_delete,
                 group->prev_kv, group->progress_notify, json};
    joining_.insert(id);
  }
}

void WatchStreams::Ack(WatchId id, uint64_t seq, bool group_subscribed, int64_t group_id) {
  if (auto member = members_.find(id); member != members_.end()) {
    if (group_id == member->second.group) member->second.last_ack_ms = clock_->MonotonicMs();
    return;
  }
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  Stream& stream = it->second;
  auto& unacked = stream.unacked;
  while (!unacked.empty() && unacked.front().first <= seq) unacked.pop_front();
  if (group_subscribed && group_id != 0 && group_id == stream.offered_group) {
    stream.subscribed = true;
  }
}

void WatchStreams::Remove(WatchId id) {
  if (auto member = members_.find(id); member != members_.end()) {
    const WatchId group = member->second.group;
    members_.erase(member);
    Leave(group);
    return;
  }
  auto it = streams_.find(id);
  if (it != streams_.end()) EraseStream(it);
}

void WatchStreams::EraseStream(std::map<WatchId, Stream>::iterator it) {
  joining_.erase(it->first);
  const WatchId offered = it->second.offered_group;
  streams_.erase(it);
  if (offered != 0) Unoffer(offered);
}

Status WatchStreams::RequestProgress(WatchId id) {
  auto member = members_.find(id);
  return hub_->RequestProgress(member != members_.end() ? member->second.group : id);
}

void WatchStreams::Publish(Stream& stream, const std::string& body) {
  // A failed publish (connection closed, reconnect buffer full) shows up to
  // the client as a seq gap; it then re-creates the watch.
  (void)Respond(nc_, stream.deliver_subject.c_str(), body, stream.json);
  int64_t now = clock_->MonotonicMs();
  if (!stream.group) stream.unacked.emplace_back(stream.next_seq, now);
  ++stream.next_seq;
  stream.last_sent_ms = now;
}

const std::string& WatchStreams::EncodedEvent(const Event& event, bool prev_kv, bool json) {
  const uint8_t flavor = static_cast<uint8_t>((prev_kv ? 1 : 0) | (json ? 2 : 0));
  std::string& out = encoded_[{&event, flavor}];
  if (!out.empty()) return out;
  ProtoArena arena;
  const Natcd__V1__Event* proto = ToProto(event, prev_kv, &arena);
  if (json) {
    out = MessageToJson(&proto->base);
    return out;
  }
  // WatchResponse.events (field 11, length-delimited): tag, length, bytes.
  size_t size = protobuf_c_message_get_packed_size(&proto->base);
  uint8_t prefix[16];
  size_t n = 0;
  prefix[n++] = (11 << 3) | 2;
  for (size_t v = size;; v >>= 7) {
    prefix[n++] = static_cast<uint8_t>((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    if (v <= 0x7f) break;
  }
  out.resize(n + size);
  memcpy(out.data(), prefix, n);
  protobuf_c_message_pack(&proto->base, reinterpret_cast<uint8_t*>(out.data() + n));
  return out;
}

bool WatchStreams::Send(WatchId id, Stream& stream, const WatchMessage& message) {
  const size_t payload_max = static_cast<size_t>(std::max<int64_t>(
      natsConnection_GetMaxPayload(nc_), static_cast<int64_t>(2 * kMessageOverheadBytes)));
  const size_t events_bytes_max = payload_max - kMessageOverheadBytes;

  // Each event is encoded once per Deliver round and shared by every watch
  // that sends it (a fan-out to 1,000 watchers encodes it once, not 1,000
  // times).
  std::vector<const std::string*> events;
  events.reserve(message.events.size());
  for (const EventRef& event : message.events) {
    const std::string* bytes = &EncodedEvent(*event, message.prev_kv, stream.json);
    if (bytes->size() + 1 > events_bytes_max && message.prev_kv) {
      // Too big with its previous value: send the event without it.
      bytes = &EncodedEvent(*event, false, stream.json);
    }
    events.push_back(bytes);
  }
  // An event that cannot fit in one message on its own cannot be delivered:
  // send what comes before it, then end the watch saying why.
  auto revision_of = [&](size_t i) { return message.events[i]->kv.mod_revision; };
  size_t deliverable = events.size();
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i]->size() + 1 > events_bytes_max) {
      deliverable = i;
      // Whole revisions only: stop before the revision that holds it.
      while (deliverable > 0 && revision_of(deliverable - 1) == revision_of(i)) --deliverable;
      break;
    }
  }
  WatchMessage too_large;
  const WatchMessage* tail = &message;
  if (deliverable < events.size()) {
    too_large.canceled = true;
    too_large.cancel_reason = "event at revision " + std::to_string(revision_of(deliverable)) +
                              " is larger than the NATS max payload (" +
                              std::to_string(payload_max) + " bytes)";
    tail = &too_large;
    events.resize(deliverable);
  }

  ResponseHeader header;
  header.revision = message.revision;
  // Messages hold whole revisions: after this one the client has every
  // event up to its last event's revision, or up to a progress bookmark.
  if (!events.empty()) {
    stream.delivered_revision = std::max(stream.delivered_revision, revision_of(events.size() - 1));
  } else if (message.progress) {
    stream.delivered_revision = std::max(stream.delivered_revision, message.revision);
  }
  // A client resumes from a cancel's revision + 1.
  if (tail == &too_large) header.revision = stream.delivered_revision;

  ProtoArena arena;
  size_t begin = 0;
  do {
    size_t end = begin;
    size_t bytes = 0;
    while (end < events.size() &&
           (end == begin || bytes + events[end]->size() + 1 <= events_bytes_max)) {
      bytes += events[end]->size() + 1;
      ++end;
    }
    const bool last = end >= events.size();
    Natcd__V1__WatchResponse response;
    natcd__v1__watch_response__init(&response);
    response.header = ToProto(header, header_, &arena);
    if (stream.group) {
      response.group_id = id;
      response.group_seq = stream.next_seq;
    } else {
      response.watch_id = id;
      response.seq = stream.next_seq;
    }
    // Split inside one revision: etcd's fragment flag says more follows.
    response.fragment = !last && revision_of(end - 1) == revision_of(end);
    if (last) {
      response.canceled = tail->canceled;
      response.cancel_reason =
          tail->canceled ? const_cast<char*>(tail->cancel_reason.c_str()) : const_cast<char*>("");
      response.compact_revision = tail->compact_revision;
    }
    // The response without its events, then the events as encoded: in
    // protobuf a repeated field may follow the others; in JSON it is one
    // more member of the object.
    std::string body = EncodeMessage(&response.base, stream.json);
    if (begin < end) {
      if (stream.json) {
        body.pop_back();  // '}'
        body += body.size() > 1 ? ",\"events\":[" : "\"events\":[";
        for (size_t i = begin; i < end; ++i) {
          if (i > begin) body += ',';
          body += *events[i];
        }
        body += "]}";
      } else {
        for (size_t i = begin; i < end; ++i) body += *events[i];
      }
    }
    Publish(stream, body);
    begin = end;
  } while (begin < events.size());
  return !tail->canceled;
}

void WatchStreams::Deliver(bool ignore_window) {
  const std::vector<WatchId> ready = hub_->Ready();
  // Groups cost one publish a message: only streams count as busy watches.
  const size_t ready_streams = static_cast<size_t>(std::count_if(
      ready.begin(), ready.end(), [&](WatchId id) { return groups_.count(id) == 0; }));
  const bool coalesce = options_.coalesce_ms > 0 && ready_streams >= options_.coalesce_ready_min;
  for (WatchId id : ready) {
    if (auto group = groups_.find(id); group != groups_.end()) {
      // Published once for every member, without a window (watch_streams.h).
      Stream& stream = group->second.stream;
      WatchMessage message;
      while (hub_->Poll(id, options_.message_events_max, &message)) {
        if (message.progress) group->second.last_heartbeat_ms = clock_->MonotonicMs();
        if (!Send(id, stream, message) || message.canceled) {
          if (!message.canceled) (void)hub_->Cancel(id);  // ended by Send
          EndGroup(id);
          break;
        }
        message = WatchMessage{};
      }
      continue;
    }
    auto it = streams_.find(id);
    if (it == streams_.end()) continue;
    Stream& stream = it->second;
    WatchMessage message;
    // A canceled watch (slow consumer...) holds nothing but its cancel
    // message: send it past a full window, so the client learns at once.
    // Coalescing (watch_streams.h) holds events while a message is
    // unacknowledged, for at most coalesce_ms after it; not for a watch
    // about to join its group, which must drain to join.
    auto may_send = [&] {
      if (ignore_window || hub_->CancelPending(id)) return true;
      if (stream.unacked.size() >= options_.window_messages) return false;
      if (stream.unacked.empty() || !coalesce || stream.subscribed) return true;
      const WatchHub::Backlog backlog = hub_->BacklogOf(id);
      if (backlog.progress_first || backlog.events >= options_.message_events_max) return true;
      return clock_->MonotonicMs() - stream.unacked.back().second >= options_.coalesce_ms;
    };
    while (may_send() && hub_->Poll(id, options_.message_events_max, &message)) {
      if (!Send(id, stream, message) || message.canceled) {
        if (!message.canceled) (void)hub_->Cancel(id);  // ended by Send
        EraseStream(it);
        break;
      }
      message = WatchMessage{};
    }
  }
  HandOver();
  encoded_.clear();  // the events may be freed once polled
}

void WatchStreams::SendControl(WatchId id, Stream& stream, int64_t revision,
                               const std::string& group_subject, WatchId group_id,
                               uint64_t group_seq) {
  ProtoArena arena;
  Natcd__V1__WatchResponse response;
  natcd__v1__watch_response__init(&response);
  ResponseHeader header;
  header.revision = revision;
  response.header = ToProto(header, header_, &arena);
  response.watch_id = id;
  response.seq = stream.next_seq;
  if (!group_subject.empty()) response.group_subject = const_cast<char*>(group_subject.c_str());
  response.group_id = group_id;
  response.group_seq = group_seq;
  stream.delivered_revision = std::max(stream.delivered_revision, revision);
  Publish(stream, EncodeMessage(&response.base, stream.json));
}

void WatchStreams::HandOver() {
  for (auto it = joining_.begin(); it != joining_.end();) {
    const WatchId id = *it++;  // before Offer or the hand-over erase it
    auto found = streams_.find(id);
    if (found == streams_.end()) continue;
    Stream& stream = found->second;
    if (stream.offered_group != 0 && !stream.subscribed) continue;  // the client's turn
    if (stream.unacked.size() >= options_.window_messages) continue;
    // Drained: the client has (or is being sent) every event of the watch
    // up to revision, and nothing past it.
    int64_t revision = 0;
    if (!hub_->Drained(id, &revision) || revision < stream.delivered_revision) continue;
    if (stream.offered_group == 0) {
      Offer(id, stream, revision);
      continue;
    }
    const WatchId group_id = stream.offered_group;
    Group& group = groups_.at(group_id);
    // The group drained at the same revision has published every event up
    // to it, and its next message holds only later ones: from group_seq
    // next_seq on the client misses nothing and sees nothing twice.
    int64_t group_revision = 0;
    if (!hub_->Drained(group_id, &group_revision) || group_revision != revision) continue;
    SendControl(id, stream, revision, std::string(), group_id, group.stream.next_seq);
    Member& member = members_[id];
    member.group = group_id;
    member.deliver_subject = std::move(stream.deliver_subject);
    member.json = stream.json;
    member.next_seq = stream.next_seq;
    member.last_ack_ms = clock_->MonotonicMs();
    ++group.members;
    --group.offered;
    (void)hub_->Cancel(id);
    joining_.erase(id);
    streams_.erase(found);
  }
}

void WatchStreams::Offer(WatchId id, Stream& stream, int64_t revision) {
  const GroupKey& key = *stream.group_key;
  WatchId group_id = 0;
  if (auto found = group_by_key_.find(key); found != group_by_key_.end()) {
    group_id = found->second;
  } else {
    WatchOptions options;
    options.key = key.key;
    options.range_end = key.range_end;
    options.no_put = key.no_put;
    options.no_delete = key.no_delete;
    options.prev_kv = key.prev_kv;
    options.progress_notify = key.progress_notify;
    // Where the watch is: the group starts out drained at the same revision.
    options.start_revision = revision + 1;
    WatchId wanted = 0;
    while (wanted == 0 || Has(wanted) || groups_.count(wanted) != 0) {
      wanted = static_cast<WatchId>(rng_() >> 1);
    }
    Result<WatchId> created = hub_->Create(options, wanted);
    if (!created.ok()) {
      // No room for one more hub watcher: the watch stays on its own stream.
      stream.group_key.reset();
      joining_.erase(id);
      return;
    }
    group_id = *created;
    const int64_t now = clock_->MonotonicMs();
    Group& group = groups_[group_id];
    group.key = key;
    group.stream.deliver_subject = WatchGroupSubject(prefix_, header_.member_id, group_id);
    group.stream.json = key.json;
    group.stream.group = true;
    group.stream.delivered_revision = revision;
    group.stream.last_sent_ms = now;
    group.last_heartbeat_ms = now;
    group_by_key_.emplace(key, group_id);
  }
  Group& group = groups_.at(group_id);
  ++group.offered;
  stream.offered_group = group_id;
  stream.subscribed = false;
  SendControl(id, stream, revision, group.stream.deliver_subject, group_id, 0);
}

void WatchStreams::Unoffer(WatchId group_id) {
  auto group = groups_.find(group_id);
  if (group == groups_.end()) return;
  --group->second.offered;
  ReclaimIfUnused(group_id);
}

void WatchStreams::Leave(WatchId group_id) {
  auto group = groups_.find(group_id);
  if (group == groups_.end()) return;
  --group->second.members;
  ReclaimIfUnused(group_id);
}

void WatchStreams::ReclaimIfUnused(WatchId group_id) {
  auto group = groups_.find(group_id);
  if (group == groups_.end() || group->second.members > 0 || group->second.offered > 0) return;
  (void)hub_->Cancel(group_id);
  group_by_key_.erase(group->second.key);
  groups_.erase(group);
}

void WatchStreams::EndGroup(WatchId group_id) {
  auto group = groups_.find(group_id);
  if (group == groups_.end()) return;
  group_by_key_.erase(group->second.key);
  groups_.erase(group);
  std::erase_if(members_, [&](const auto& member) { return member.second.group == group_id; });
  for (WatchId id : joining_) {
    Stream& stream = streams_.at(id);
    if (stream.offered_group != group_id) continue;
    // Offered again, a new group, once drained.
    stream.offered_group = 0;
    stream.subscribed = false;
  }
}

void WatchStreams::Tick() {
  const int64_t now = clock_->MonotonicMs();
  for (auto it = streams_.begin(); it != streams_.end();) {
    Stream& stream = it->second;
    auto next = std::next(it);
    if (!stream.unacked.empty() && now - stream.unacked.front().second > options_.ack_timeout_ms) {
      // The client stopped acknowledging: it is gone (or hopelessly slow).
      WatchId id = it->first;
      // With its window full the hub's own cancel (a slow consumer) could
      // not be sent: send it now, with its reason and resume revision.
      WatchMessage pending;
      if (hub_->Poll(id, options_.message_events_max, &pending) && pending.canceled) {
        (void)Send(id, stream, pending);
        EraseStream(it);
        it = next;
        continue;
      }
      (void)hub_->Cancel(id);
      WatchMessage bye;
      bye.watch_id = id;
      // What the client has in full (not the store's revision: events
      // after it were never sent, and a client that was only paused must
      // be able to resume without a gap).
      bye.revision = stream.delivered_revision;
      bye.canceled = true;
      bye.cancel_reason = "watch reclaimed: no acknowledgement for " +
                          std::to_string(options_.ack_timeout_ms) + " ms";
      (void)Send(id, stream, bye);  // best effort: the client is probably gone
      EraseStream(it);
      it = next;
      continue;
    }
    // Also with messages unacknowledged: if the last of them was lost, the
    // heartbeat's seq shows the client the gap.
    if (now - stream.last_sent_ms >= options_.heartbeat_ms) {
      // Asks for a progress message; it comes once the watch is synced.
      (void)hub_->RequestProgress(it->first);
      stream.last_sent_ms = now;
    }
    it = next;
  }
  // A group's heartbeat goes out busy or not: members acknowledge
  // heartbeats (and only them) to show they are alive.
  for (auto& [group_id, group] : groups_) {
    if (now - group.last_heartbeat_ms < options_.heartbeat_ms) continue;
    (void)hub_->RequestProgress(group_id);
    group.last_heartbeat_ms = now;
  }
  // A member can only acknowledge a heartbeat: one more heartbeat of slack.
  const int64_t member_timeout_ms = options_.ack_timeout_ms + options_.heartbeat_ms;
  for (auto it = members_.begin(); it != members_.end();) {
    Member& member = it->second;
    if (now - member.last_ack_ms <= member_timeout_ms) {
      ++it;
      continue;
    }
    const WatchId id = it->first;
    const WatchId group_id = member.group;
    Stream own;
    own.deliver_subject = member.deliver_subject;
    own.json = member.json;
    own.next_seq = member.next_seq;
    WatchMessage bye;
    bye.watch_id = id;
    // natcd does not know what a member processed: its client resumes from
    // its own record.
    bye.revision = 0;
    bye.canceled = true;
    bye.cancel_reason =
        "watch reclaimed: no acknowledgement for " + std::to_string(member_timeout_ms) + " ms";
    (void)Send(id, own, bye);  // best effort
    it = members_.erase(it);
    Leave(group_id);
  }
  encoded_.clear();
}

}  // namespace natcd::nats
