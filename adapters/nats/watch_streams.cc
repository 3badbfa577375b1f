#include "adapters/nats/watch_streams.h"

#include <algorithm>
#include <vector>

#include "adapters/nats/reply.h"
#include "adapters/nats/wire.h"

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

bool WatchStreams::Send(WatchId id, Stream& stream, const WatchMessage& message) {
  const size_t payload_max = static_cast<size_t>(std::max<int64_t>(
      natsConnection_GetMaxPayload(nc_), static_cast<int64_t>(2 * kMessageOverheadBytes)));
  const size_t events_bytes_max = payload_max - kMessageOverheadBytes;

  ProtoArena arena;
  std::vector<Natcd__V1__Event*> events;
  std::vector<size_t> sizes;
  events.reserve(message.events.size());
  size_t total = 0;
  for (const EventRef& event : message.events) {
    events.push_back(ToProto(*event, message.prev_kv, &arena));
    // Field tag, length prefix and the event.
    size_t size = protobuf_c_message_get_packed_size(&events.back()->base) + 6;
    if (size > events_bytes_max && message.prev_kv) {
      // Too big with its previous value: send the event without it.
      events.back() = ToProto(*event, false, &arena);
      size = protobuf_c_message_get_packed_size(&events.back()->base) + 6;
    }
    sizes.push_back(size);
    total += size;
  }
  // JSON is bigger (base64 adds a third, names and quotes the rest): measure
  // it exactly only when it might not fit.
  if (stream.json && total * 3 / 2 + 256 * events.size() > events_bytes_max) {
    total = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      sizes[i] = EncodeMessage(&events[i]->base, true).size() + 1;
      total += sizes[i];
    }
  }
  // An event that cannot fit in one message on its own cannot be delivered:
  // send what comes before it, then end the watch saying why.
  size_t deliverable = events.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] > events_bytes_max) {
      deliverable = i;
      // Whole revisions only: stop before the revision that holds it.
      while (deliverable > 0 &&
             events[deliverable - 1]->kv->mod_revision == events[i]->kv->mod_revision) {
        --deliverable;
      }
      break;
    }
  }
  WatchMessage too_large;
  const WatchMessage* tail = &message;
  if (deliverable < events.size()) {
    events.resize(deliverable);
    sizes.resize(deliverable);
    too_large.canceled = true;
    too_large.cancel_reason =
        "event at revision " + std::to_string(message.events[deliverable]->kv.mod_revision) +
        " is larger than the NATS max payload (" + std::to_string(payload_max) + " bytes)";
    tail = &too_large;
  }
  ResponseHeader header;
  header.revision = message.revision;
  // Messages hold whole revisions: after this one the client has every
  // event up to its last event's revision, or up to a progress bookmark.
  if (!events.empty()) {
    stream.delivered_revision =
        std::max(stream.delivered_revision, events.back()->kv->mod_revision);
  } else if (message.progress) {
    stream.delivered_revision = std::max(stream.delivered_revision, message.revision);
  }
  // A client resumes from a cancel's revision + 1.
  if (tail == &too_large) header.revision = stream.delivered_revision;

  size_t begin = 0;
  do {
    size_t end = begin;
    size_t bytes = 0;
    while (end < events.size() && (end == begin || bytes + sizes[end] <= events_bytes_max)) {
      bytes += sizes[end];
      ++end;
    }
    const bool last = end >= events.size();
    Natcd__V1__WatchResponse response;
    natcd__v1__watch_response__init(&response);
    response.header = ToProto(header, header_, &arena);
    response.watch_id = id;
    response.n_events = end - begin;
    response.events = events.data() + begin;
    response.seq = stream.next_seq;
    // Split inside one revision: etcd's fragment flag says more follows.
    response.fragment = !last && events[end - 1]->kv->mod_revision == events[end]->kv->mod_revision;
    if (last) {
      response.canceled = tail->canceled;
      response.cancel_reason =
          tail->canceled ? const_cast<char*>(tail->cancel_reason.c_str()) : const_cast<char*>("");
      response.compact_revision = tail->compact_revision;
    }
    Publish(stream, EncodeMessage(&response.base, stream.json));
    begin = end;
  } while (begin < events.size());
  return !tail->canceled;
}

void WatchStreams::Deliver(bool ignore_window) {
  for (WatchId id : hub_->Ready()) {
    auto it = streams_.find(id);
    if (it == streams_.end()) continue;
    Stream& stream = it->second;
    WatchMessage message;
    // A canceled watch (slow consumer...) holds nothing but its cancel
    // message: send it past a full window, so the client learns at once.
    while ((ignore_window || stream.unacked.size() < options_.window_messages ||
            hub_->CancelPending(id)) &&
           hub_->Poll(id, options_.message_events_max, &message)) {
      if (!Send(id, stream, message) || message.canceled) {
        if (!message.canceled) (void)hub_->Cancel(id);  // ended by Send
        streams_.erase(it);
        break;
      }
      message = WatchMessage{};
    }
  }
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
        ++reclaimed_;
        (void)Send(id, stream, pending);
        it = streams_.erase(it);
        continue;
      }
      (void)hub_->Cancel(id);
      ++reclaimed_;
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
    if (stream.unacked.empty() && now - stream.last_sent_ms >= options_.heartbeat_ms) {
      // Asks for a progress message; it comes once the watch is synced.
      (void)hub_->RequestProgress(it->first);
      stream.last_sent_ms = now;
    }
    ++it;
  }
}

}  // namespace natcd::nats
