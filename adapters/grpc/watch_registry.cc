#include "adapters/grpc/watch_registry.h"

#include <algorithm>
#include <vector>

#include "adapters/nats/codec/convert.h"

namespace natcd::etcd_api {
namespace {

// Events taken from the hub per response (whole revisions, so one large
// revision may exceed it).
constexpr size_t kResponseEventsMax = 1'000;
// A progress response not tied to one watch (etcd 3.5's clientv3.InvalidWatchID).
constexpr int64_t kBroadcastWatchId = -1;

}  // namespace

WatchRegistry::WatchRegistry(const CallContext* calls, size_t stream_bytes_max)
    : calls_(calls), stream_bytes_max_(stream_bytes_max) {}

WatchRegistry::~WatchRegistry() = default;

nats::HeaderInfo WatchRegistry::Header() const {
  nats::HeaderInfo header = calls_->response.header;
  header.raft_term = calls_->member->raft_term();
  return header;
}

void WatchRegistry::SendControl(Stream& stream, int64_t watch_id, int64_t revision, bool created,
                                bool canceled, const char* reason, int64_t compact_revision) {
  nats::ProtoArena arena;
  Natcd__V1__WatchResponse out;
  natcd__v1__watch_response__init(&out);
  ResponseHeader header;
  header.revision = revision;
  out.header = nats::ToProto(header, Header(), &arena);
  out.watch_id = watch_id;
  out.created = created;
  out.canceled = canceled;
  if (reason != nullptr && reason[0] != '\0') out.cancel_reason = const_cast<char*>(reason);
  out.compact_revision = compact_revision;
  stream.call->Send(Pack(out.base));
}

void WatchRegistry::Create(std::shared_ptr<StreamCall> call,
                           const Natcd__V1__WatchCreateRequest& request, const std::string& token) {
  on_member_thread_.AssertHeld();
  StreamCall* key = call.get();
  if (call->ended()) return;
  Stream& stream = streams_[key];
  if (stream.call == nullptr) stream.call = std::move(call);
  if (engine_ == nullptr) {
    SendControl(stream, -1, 0, true, true, "etcdserver: server stopped", 0);
    return;
  }
  const int64_t revision = engine_->CurrentRevision();
  WatchOptions options;
  Status s = nats::FromProto(request, &options);
  // etcd: an empty key is the smallest key, "\0".
  if (options.key.empty()) options.key = std::string(1, '\0');
  // etcd never cancels a slow watcher: it catches up from history.
  options.catch_up_when_slow = true;
  int64_t id = request.watch_id;
  if (s.ok() && id != 0 && stream.watches.count(id) != 0) {
    s = Status::InvalidArgument("ErrWatcherDuplicateID",
                                "mvcc: duplicate watch ID provided on the WatchStream");
  }
  if (s.ok() && id < 0) s = Status::InvalidArgument("ErrInvalidWatchID", "mvcc: invalid watch ID");
  if (s.ok())
    s = calls_->member->AuthorizeWatch(token, false, false, options.key, options.range_end);
  Result<WatchId> created = s.ok() ? engine_->watches().Create(options) : Result<WatchId>(s);
  if (!created.ok()) {
    const std::string reason(created.status().message());
    SendControl(stream, -1, revision, true, true, reason.c_str(), 0);
    return;
  }
  if (id == 0) {
    while (stream.watches.count(stream.next_id) != 0) stream.next_id++;
    id = stream.next_id++;
  }
  stream.watches[id] = *created;
  watches_[*created] = Watch{&stream, id, static_cast<bool>(request.fragment)};
  SendControl(stream, id, revision, true, false, nullptr, 0);
}

void WatchRegistry::Cancel(StreamCall* call, int64_t watch_id) {
  on_member_thread_.AssertHeld();
  auto it = streams_.find(call);
  if (it == streams_.end() || engine_ == nullptr) return;
  Stream& stream = it->second;
  auto watch = stream.watches.find(watch_id);
  if (watch == stream.watches.end()) return;  // etcd answers nothing either
  (void)engine_->watches().Cancel(watch->second);
  Forget(watch->second);
  SendControl(stream, watch_id, engine_->revision(), false, true, nullptr, 0);
}

void WatchRegistry::RequestProgress(StreamCall* call) {
  on_member_thread_.AssertHeld();
  if (engine_ == nullptr || call->ended()) return;
  auto it = streams_.find(call);
  if (it == streams_.end() || it->second.watches.empty()) {
    // No watch to wait for: the revision now is every watch's bookmark.
    nats::ProtoArena arena;
    Natcd__V1__WatchResponse out;
    natcd__v1__watch_response__init(&out);
    ResponseHeader header;
    header.revision = engine_->revision();
    out.header = nats::ToProto(header, Header(), &arena);
    out.watch_id = kBroadcastWatchId;
    call->Send(Pack(out.base));
    return;
  }
  Stream& stream = it->second;
  if (stream.progress_requested) return;  // one answer covers both
  stream.progress_requested = true;
  stream.progress_revision = 0;
  for (const auto& [id, hub_id] : stream.watches) {
    if (engine_->watches().RequestProgress(hub_id).ok()) stream.progress_pending.insert(hub_id);
  }
  MaybeAnswerProgress(stream);
}

void WatchRegistry::MaybeAnswerProgress(Stream& stream) {
  if (!stream.progress_requested || !stream.progress_pending.empty()) return;
  stream.progress_requested = false;
  const int64_t revision =
      stream.progress_revision != 0 ? stream.progress_revision : engine_->revision();
  nats::ProtoArena arena;
  Natcd__V1__WatchResponse out;
  natcd__v1__watch_response__init(&out);
  ResponseHeader header;
  header.revision = revision;
  out.header = nats::ToProto(header, Header(), &arena);
  out.watch_id = kBroadcastWatchId;
  stream.call->Send(Pack(out.base));
}

void WatchRegistry::StreamEnded(StreamCall* call) {
  on_member_thread_.AssertHeld();
  auto it = streams_.find(call);
  if (it == streams_.end()) return;
  for (const auto& [id, hub_id] : it->second.watches) {
    if (engine_ != nullptr) (void)engine_->watches().Cancel(hub_id);
    watches_.erase(hub_id);
  }
  streams_.erase(it);
}

Result<WatchId> WatchRegistry::WatchOwn(const WatchOptions& options, OwnWatchHandler on_message) {
  on_member_thread_.AssertHeld();
  if (engine_ == nullptr) return Status::Unavailable("ErrStopped", "etcdserver: server stopped");
  WatchOptions own = options;
  own.catch_up_when_slow = true;  // as every watch of etcd's API
  Result<WatchId> created = engine_->watches().Create(own);
  if (created.ok()) own_[*created] = std::move(on_message);
  return created;
}

void WatchRegistry::CancelOwn(WatchId id) {
  on_member_thread_.AssertHeld();
  if (own_.erase(id) != 0 && engine_ != nullptr) (void)engine_->watches().Cancel(id);
}

void WatchRegistry::DeliverOwn(WatchId hub_id) {
  WatchHub& hub = engine_->watches();
  WatchMessage message;
  while (hub.Poll(hub_id, kResponseEventsMax, &message)) {
    auto it = own_.find(hub_id);
    if (it == own_.end()) return;
    // A copy: the handler may start or cancel watches.
    OwnWatchHandler handler = it->second;
    if (message.canceled) own_.erase(it);
    const bool more = handler(message);
    if (message.canceled) return;
    if (!more) {
      CancelOwn(hub_id);
      return;
    }
    message = WatchMessage{};
  }
}

void WatchRegistry::Forget(WatchId hub_id) {
  auto it = watches_.find(hub_id);
  if (it == watches_.end()) return;
  Stream& stream = *it->second.stream;
  stream.watches.erase(it->second.id);
  if (stream.progress_pending.erase(hub_id) != 0) MaybeAnswerProgress(stream);
  watches_.erase(it);
}

const std::vector<WatchRegistry::EncodedResponse>& WatchRegistry::Encoded(
    const WatchMessage& message, bool fragment) {
  BatchKey key;
  std::get<0>(key).reserve(message.events.size());
  for (const EventRef& e : message.events) std::get<0>(key).push_back(e.get());
  std::get<1>(key) = message.revision;
  std::get<2>(key) = message.prev_kv;
  std::get<3>(key) = fragment;
  auto [it, added] = encoded_.try_emplace(std::move(key));
  if (!added) return it->second;
  encoded_events_.insert(encoded_events_.end(), message.events.begin(), message.events.end());
  std::vector<EncodedResponse>& responses = it->second;
  nats::HeaderInfo info = Header();
  // Fragments (when the watch asked for them) keep each response within
  // the request limit, as etcd's: every fragment but the last says so.
  const size_t limit = fragment ? calls_->request_bytes_max : SIZE_MAX;
  size_t begin = 0;
  do {
    nats::ProtoArena arena;
    Natcd__V1__WatchResponse out;
    natcd__v1__watch_response__init(&out);
    ResponseHeader header;
    header.revision = message.revision;
    out.header = nats::ToProto(header, info, &arena);
    std::vector<Natcd__V1__Event*> events;
    size_t bytes = 0;
    size_t end = begin;
    while (end < message.events.size()) {
      Natcd__V1__Event* event = nats::ToProto(*message.events[end], message.prev_kv, &arena);
      const size_t size = protobuf_c_message_get_packed_size(&event->base);
      if (!events.empty() && bytes + size > limit) break;
      events.push_back(event);
      bytes += size;
      end++;
    }
    out.events = events.data();
    out.n_events = events.size();
    out.fragment = end < message.events.size();
    EncodedResponse response{grpc::Slice(protobuf_c_message_get_packed_size(&out.base)), 0};
    uint8_t* data = const_cast<uint8_t*>(response.bytes.begin());
    protobuf_c_message_pack(&out.base, data);
    // The header (field 1, always set) comes first: its tag, its length
    // as a varint, its bytes. watch_id (field 2) goes right after it.
    size_t at = 1;
    uint64_t length = 0;
    for (int shift = 0; at < response.bytes.size(); shift += 7) {
      const uint8_t b = data[at++];
      length |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) break;
    }
    response.header_end =
        data[0] == 0x0a ? std::min<size_t>(at + length, response.bytes.size()) : 0;
    responses.push_back(std::move(response));
    begin = end;
  } while (begin < message.events.size());
  return responses;
}

namespace {

// An encoded response with watch ID 0, as the watch's own: its watch_id
// (field 2, a varint; omitted for 0 as protobuf does) between the header
// and the rest, the bytes around it shared.
grpc::ByteBuffer WithWatchId(const grpc::Slice& bytes, size_t header_end, int64_t watch_id) {
  if (watch_id == 0) return grpc::ByteBuffer(&bytes, 1);
  uint8_t field[11] = {0x10};  // field 2, varint
  size_t n = 1;
  for (uint64_t v = static_cast<uint64_t>(watch_id);; v >>= 7) {
    field[n++] = static_cast<uint8_t>(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
    if (v < 0x80) break;
  }
  const grpc::Slice parts[3] = {bytes.sub(0, header_end), grpc::Slice(field, n),
                                bytes.sub(header_end, bytes.size())};
  return grpc::ByteBuffer(parts, 3);
}

}  // namespace

void WatchRegistry::SendEvents(Watch& watch, const WatchMessage& message) {
  for (const EncodedResponse& r : Encoded(message, watch.fragment)) {
    watch.stream->call->Send(WithWatchId(r.bytes, r.header_end, watch.id));
  }
}

bool WatchRegistry::Send(WatchId hub_id, Watch& watch, WatchMessage& message) {
  Stream& stream = *watch.stream;
  if (message.canceled) {
    const int64_t id = watch.id;
    Forget(hub_id);
    SendControl(stream, id, message.revision, false, true, message.cancel_reason.c_str(),
                message.compact_revision);
    return false;
  }
  if (message.progress) {
    if (stream.progress_pending.erase(hub_id) != 0) {
      // Part of a progress request: one answer for the stream.
      if (stream.progress_revision == 0 || message.revision < stream.progress_revision) {
        stream.progress_revision = message.revision;
      }
      MaybeAnswerProgress(stream);
    } else {
      SendControl(stream, watch.id, message.revision, false, false, nullptr, 0);
    }
    return true;
  }
  SendEvents(watch, message);
  return true;
}

void WatchRegistry::Deliver(bool ignore_bound) {
  if (engine_ == nullptr || (watches_.empty() && own_.empty())) return;
  WatchHub& hub = engine_->watches();
  for (WatchId hub_id : hub.Ready()) {
    if (own_.count(hub_id) != 0) {
      DeliverOwn(hub_id);
      continue;
    }
    auto it = watches_.find(hub_id);
    if (it == watches_.end()) continue;  // another front end's
    StreamCall* call = it->second.stream->call.get();
    WatchMessage message;
    auto may_send = [&] {
      return ignore_bound || hub.CancelPending(hub_id) || call->queued_bytes() < stream_bytes_max_;
    };
    while (may_send() && hub.Poll(hub_id, kResponseEventsMax, &message)) {
      if (!Send(hub_id, it->second, message)) break;
      message = WatchMessage{};
    }
  }
  // The Event objects may go once the hub drops them: no key may outlive
  // the round.
  encoded_.clear();
  encoded_events_.clear();
}

void WatchRegistry::Attach(Engine* engine) {
  on_member_thread_.AssertHeld();
  engine_ = engine;
}

void WatchRegistry::Detach() {
  on_member_thread_.AssertHeld();
  // Every watch was canceled with the reason: send it all.
  Deliver(/*ignore_bound=*/true);
  for (auto& [call, stream] : streams_) stream.watches.clear();
  watches_.clear();
  own_.clear();
  engine_ = nullptr;
}

void WatchRegistry::AfterTurn() {
  on_member_thread_.AssertHeld();
  Deliver(/*ignore_bound=*/false);
}

}  // namespace natcd::etcd_api
