#include "adapters/nats/front_end/event_publisher.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>

#include "adapters/nats/codec/subject.h"

namespace natcd::nats {
namespace {

std::string_view ToDecimal(int64_t value, std::array<char, 24>* buffer) {
  const auto [end, ec] = std::to_chars(buffer->data(), buffer->data() + buffer->size(), value);
  (void)ec;  // 24 bytes hold any int64_t
  return std::string_view(buffer->data(), static_cast<size_t>(end - buffer->data()));
}

}  // namespace

EventPublisher::EventPublisher(natsConnection* nc, std::string prefix, size_t events_pending_max,
                               metrics::Counter* published_counter)
    : nc_(nc),
      prefix_(std::move(prefix)),
      events_pending_max_(events_pending_max),
      published_counter_(published_counter) {
  thread_ = std::thread([this] { Run(); });
}

EventPublisher::~EventPublisher() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.NotifyOne();
  thread_.join();
}

void EventPublisher::Enqueue(Batch batch) {
  if (!batch || batch->empty()) return;
  {
    MutexLock lock(&mu_);
    queued_events_ += batch->size();
    queue_.push_back(std::move(batch));
    while (queued_events_ > events_pending_max_ && queue_.size() > 1) {
      queued_events_ -= queue_.front()->size();
      dropped_ += queue_.front()->size();
      queue_.pop_front();
    }
  }
  wake_.NotifyOne();
}

void EventPublisher::Flush() {
  MutexLock lock(&mu_);
  while (!queue_.empty() || busy_) idle_.Wait(&mu_);
}

void EventPublisher::SetMarkerSubject(std::string subject) {
  MutexLock lock(&mu_);
  marker_subject_ = std::move(subject);
}

uint64_t EventPublisher::published() const {
  MutexLock lock(&mu_);
  return published_;
}

uint64_t EventPublisher::dropped() const {
  MutexLock lock(&mu_);
  return dropped_;
}

void EventPublisher::Run() {
  publisher_thread_.AssertHeld();
  mu_.Lock();
  for (;;) {
    while (!stopping_ && queue_.empty()) wake_.Wait(&mu_);
    if (queue_.empty()) break;  // stopping, and everything was published
    Batch batch = std::move(queue_.front());
    queue_.pop_front();
    queued_events_ -= batch->size();
    busy_ = true;
    const std::string marker = queue_.empty() ? marker_subject_ : std::string();
    mu_.Unlock();
    Publish(*batch);
    last_revision_ = std::max(last_revision_, batch->back().kv.mod_revision);
    // The server has everything before a flush's answer.
    if (!marker.empty() && natsConnection_FlushTimeout(nc_, 2'000) == NATS_OK) {
      published_revision_.store(last_revision_);
      const std::string body = std::to_string(last_revision_);
      (void)natsConnection_Publish(nc_, marker.c_str(), body.data(), static_cast<int>(body.size()));
    }
    mu_.Lock();
    busy_ = false;
    if (queue_.empty()) idle_.NotifyAll();
  }
  mu_.Unlock();
  idle_.NotifyAll();
}

void EventPublisher::Publish(const std::vector<Event>& events) {
  uint64_t published = 0;
  uint64_t dropped = 0;
  std::array<char, 24> number;
  for (const Event& event : events) {
    const bool put = event.type == Event::Type::kPut;
    std::string subject = EventSubject(prefix_, event.kv.key);
    if (subject.size() > kEventSubjectBytesMax) {
      // nats-server drops a connection whose control line passes 4 KiB:
      // such keys are left to watches.
      ++dropped;
      continue;
    }
    headers_.Reset();
    headers_.Add("Natcd-Op", put ? "PUT" : "DEL");
    headers_.Add("Natcd-Revision", ToDecimal(event.kv.mod_revision, &number));
    headers_.Add("Natcd-Create-Revision", ToDecimal(event.kv.create_revision, &number));
    headers_.Add("Natcd-Version", ToDecimal(event.kv.version, &number));
    if (event.kv.lease != 0) headers_.Add("Natcd-Lease", LeaseIdHex(event.kv.lease));
    headers_.Add("Natcd-Key", KeyToHeaderValue(event.kv.key));
    natsMsg* msg = nullptr;
    natsStatus s = headers_.Build(&msg, subject, put ? std::string_view(event.kv.value) : "");
    if (s == NATS_OK) s = natsConnection_PublishMsg(nc_, msg);
    natsMsg_Destroy(msg);
    if (s == NATS_OK) {
      ++published;
    } else {
      ++dropped;
    }
  }
  if (published_counter_ != nullptr) published_counter_->Add(published);
  MutexLock lock(&mu_);
  published_ += published;
  dropped_ += dropped;
}

}  // namespace natcd::nats
