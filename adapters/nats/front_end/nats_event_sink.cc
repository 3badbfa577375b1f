#include "adapters/nats/front_end/nats_event_sink.h"

#include <cstdlib>
#include <string>

#include "adapters/nats/peer/raft_transport.h"

namespace natcd::nats {

NatsEventSink::NatsEventSink(natsConnection* nc, std::string prefix, std::string cluster_name,
                             metrics::Counter* published_counter)
    : marker_subject_(PublishedSubject(prefix, cluster_name)),
      publisher_(nc, std::move(prefix), 1'000'000, published_counter) {}

NatsEventSink::~NatsEventSink() { Unsubscribe(); }

Status NatsEventSink::Subscribe(natsConnection* markers_nc) {
  natsStatus s =
      natsConnection_Subscribe(&sub_, markers_nc, marker_subject_.c_str(), &OnMarker, this);
  if (s != NATS_OK) {
    return Status::Unavailable("ErrNats",
                               "subscribe " + marker_subject_ + ": " + natsStatus_GetText(s));
  }
  return Status::OK();
}

void NatsEventSink::Unsubscribe() {
  if (sub_ == nullptr) return;
  (void)natsSubscription_Unsubscribe(sub_);
  natsSubscription_Destroy(sub_);
  sub_ = nullptr;
}

void NatsEventSink::OnMarker(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* self = static_cast<NatsEventSink*>(closure);
  const std::string body(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
  natsMsg_Destroy(msg);
  char* end = nullptr;
  const long long revision = strtoll(body.c_str(), &end, 10);
  if (end == body.c_str() || *end != '\0' || revision <= 0) return;
  int64_t seen = self->announced_.load();
  while (revision > seen && !self->announced_.compare_exchange_weak(seen, revision)) {
  }
}

void NatsEventSink::Publish(std::shared_ptr<const std::vector<Event>> events) {
  publisher_.Enqueue(std::move(events));
}

void NatsEventSink::SetAnnouncing(bool announcing) {
  publisher_.SetMarkerSubject(announcing ? marker_subject_ : std::string());
}

}  // namespace natcd::nats
