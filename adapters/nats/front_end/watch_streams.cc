#include "adapters/nats/front_end/watch_streams.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "adapters/nats/codec/wire.h"
#include "adapters/nats/front_end/reply.h"

namespace natcd::nats {
namespace {

// Room left in a message for everything but the events.
constexpr size_t kMessageOverheadBytes = 1024;

}  // namespace

void WatchStreams::Add(WatchId id, std::string deliver_subject, bool json,
                       int64_t delivered_revision) {
  Stream& stream = streams_[id];
  stream.deliver_subject = std::move(deliver_subject);
  stream.json = json;
  stream.last_sent_ms = clock_->MonotonicMs();
  stream.delivered_revision = delivered_revision;
}

void WatchStreams::Ack(WatchId id, uint64_t seq) {
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  auto& unacked = it->second.unacked;
  while (!unacked.empty() && unacked.front().first <= seq) unacked.pop_front();
}

void WatchStreams::Publish(Stream& stream, const std::string& body) {
  // A failed publish (connection closed, reconnect buffer full) shows up to
  // the client as a seq gap; it then re-creates the watch.
  (void)Respond(nc_, stream.deliver_subject.c_str(), body, stream.json);
  int64_t now = clock_->MonotonicMs();
  stream.unacked.emplace_back(stream.next_seq, now);
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
    response.watch_id = id;
    response.seq = stream.next_seq;
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
  const bool coalesce = options_.coalesce_ms > 0 && ready.size() >= options_.coalesce_ready_min;
  for (WatchId id : ready) {
    auto it = streams_.find(id);
    if (it == streams_.end()) continue;
    Stream& stream = it->second;
    WatchMessage message;
    // A canceled watch (slow consumer...) holds nothing but its cancel
    // message: send it past a full window, so the client learns at once.
    // Coalescing (watch_streams.h) holds events while a message is
    // unacknowledged, for at most coalesce_ms after it.
    auto may_send = [&] {
      if (ignore_window || hub_->CancelPending(id)) return true;
      if (stream.unacked.size() >= options_.window_messages) return false;
      if (stream.unacked.empty() || !coalesce) return true;
      const WatchHub::Backlog backlog = hub_->BacklogOf(id);
      if (backlog.progress_first || backlog.events >= options_.message_events_max) return true;
      return clock_->MonotonicMs() - stream.unacked.back().second >= options_.coalesce_ms;
    };
    while (may_send() && hub_->Poll(id, options_.message_events_max, &message)) {
      if (!Send(id, stream, message) || message.canceled) {
        if (!message.canceled) (void)hub_->Cancel(id);  // ended by Send
        streams_.erase(it);
        break;
      }
      message = WatchMessage{};
    }
  }
  encoded_.clear();  // the events may be freed once polled
}

void WatchStreams::Tick() {
  const int64_t now = clock_->MonotonicMs();
  for (auto it = streams_.begin(); it != streams_.end();) {
    Stream& stream = it->second;
    if (!stream.unacked.empty() && now - stream.unacked.front().second > options_.ack_timeout_ms) {
      // The client stopped acknowledging: it is gone (or hopelessly slow).
      WatchId id = it->first;
      // With its window full the hub's own cancel (a slow consumer) could
      // not be sent: send it now, with its reason and resume revision.
      WatchMessage pending;
      if (hub_->Poll(id, options_.message_events_max, &pending) && pending.canceled) {
        (void)Send(id, stream, pending);
        it = streams_.erase(it);
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
      it = streams_.erase(it);
      continue;
    }
    // Also with messages unacknowledged: if the last of them was lost, the
    // heartbeat's seq shows the client the gap.
    if (now - stream.last_sent_ms >= options_.heartbeat_ms) {
      // Asks for a progress message; it comes once the watch is synced.
      (void)hub_->RequestProgress(it->first);
      stream.last_sent_ms = now;
    }
    ++it;
  }
  encoded_.clear();
}

}  // namespace natcd::nats
