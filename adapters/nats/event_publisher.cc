#include "adapters/nats/event_publisher.h"

#include <nats/version.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>

#include "adapters/nats/subject.h"

// nats.c's constructor of every message it receives: buf holds hdr_len
// bytes of NATS header block ("NATS/1.0\r\n", "Name: value\r\n" lines, an
// empty line) followed by the payload, and such a message is published with
// that block as it is, never parsed into nats.c's header map. libnats
// exports it (with this signature from 2.2 through 3.x) but <nats/nats.h>
// does not declare it, and no public call takes a ready header block: the
// public way, natsMsg_Create and one natsMsgHeader_Set per header, makes
// about 25 allocations per event (a hash map of copied names and values),
// about 3 us of CPU here against 1 us, plus as much again on nats.c's
// thread that frees them; it was a fifth of natcd's CPU under puts. Weak,
// and used only with a libnats 3.x (see kEncodeHeaders): otherwise the
// public calls.
extern "C" natsStatus natsMsg_create(natsMsg** new_msg, const char* subject, int subject_len,
                                     const char* reply, int reply_len, const char* buf, int buf_len,
                                     int hdr_len) __attribute__((weak));

namespace natcd::nats {
namespace {

// The libnats loaded at run time is the 3.x whose natsMsg_create has the
// signature above (the soname pins major and minor; the check guards a
// build against another major).
bool CanEncodeHeaders() {
  return NATS_VERSION_MAJOR == 3 && (nats_GetVersionNumber() >> 16) == 3 &&
         natsMsg_create != nullptr;
}

void AppendHeader(std::string* out, std::string_view name, std::string_view value) {
  out->append(name);
  out->append(": ");
  out->append(value);
  out->append("\r\n");
}

void AppendHeader(std::string* out, std::string_view name, int64_t value) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  AppendHeader(out, name, std::string_view(digits, static_cast<size_t>(end - digits)));
}

}  // namespace

EventPublisher::EventPublisher(natsConnection* nc, std::string prefix, size_t events_pending_max)
    : nc_(nc),
      prefix_(std::move(prefix)),
      events_pending_max_(events_pending_max),
      encode_headers_(CanEncodeHeaders()) {
  thread_ = std::thread([this] { Run(); });
}

void EventPublisher::TEST_UsePublicHeaderCalls() { encode_headers_ = false; }

EventPublisher::~EventPublisher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void EventPublisher::Enqueue(Batch batch) {
  if (!batch || batch->empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queued_events_ += batch->size();
    queue_.push_back(std::move(batch));
    while (queued_events_ > events_pending_max_ && queue_.size() > 1) {
      queued_events_ -= queue_.front()->size();
      dropped_ += queue_.front()->size();
      queue_.pop_front();
    }
  }
  wake_.notify_one();
}

void EventPublisher::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void EventPublisher::SetMarkerSubject(std::string subject) {
  std::lock_guard<std::mutex> lock(mu_);
  marker_subject_ = std::move(subject);
}

uint64_t EventPublisher::published() const {
  std::lock_guard<std::mutex> lock(mu_);
  return published_;
}

uint64_t EventPublisher::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

void EventPublisher::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, and everything was published
    Batch batch = std::move(queue_.front());
    queue_.pop_front();
    queued_events_ -= batch->size();
    busy_ = true;
    const std::string marker = queue_.empty() ? marker_subject_ : std::string();
    lock.unlock();
    Publish(*batch);
    last_revision_ = std::max(last_revision_, batch->back().kv.mod_revision);
    // The server has everything before a flush's answer.
    if (!marker.empty() && natsConnection_FlushTimeout(nc_, 2'000) == NATS_OK) {
      published_revision_.store(last_revision_);
      const std::string body = std::to_string(last_revision_);
      (void)natsConnection_Publish(nc_, marker.c_str(), body.data(), static_cast<int>(body.size()));
    }
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
  idle_.notify_all();
}

natsMsg* EventPublisher::BuildMessage(const std::string& subject, const Event& event) {
  const bool put = event.type == Event::Type::kPut;
  const std::string_view value = put ? std::string_view(event.kv.value) : std::string_view();
  const char* op = put ? "PUT" : "DEL";
  natsMsg* msg = nullptr;
  if (encode_headers_) {
    // Header values are digits, hex and the percent-escaped key: never a
    // line break, which the header block could not hold.
    std::string& buf = scratch_;
    buf.assign("NATS/1.0\r\n");
    AppendHeader(&buf, "Natcd-Op", op);
    AppendHeader(&buf, "Natcd-Revision", event.kv.mod_revision);
    AppendHeader(&buf, "Natcd-Create-Revision", event.kv.create_revision);
    AppendHeader(&buf, "Natcd-Version", event.kv.version);
    if (event.kv.lease != 0) AppendHeader(&buf, "Natcd-Lease", LeaseIdHex(event.kv.lease));
    AppendHeader(&buf, "Natcd-Key", KeyToHeaderValue(event.kv.key));
    buf.append("\r\n");
    const size_t header_bytes = buf.size();
    buf.append(value);
    if (natsMsg_create(&msg, subject.data(), static_cast<int>(subject.size()), nullptr, 0,
                       buf.data(), static_cast<int>(buf.size()),
                       static_cast<int>(header_bytes)) != NATS_OK) {
      return nullptr;
    }
    return msg;
  }
  natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, put ? value.data() : nullptr,
                                static_cast<int>(value.size()));
  auto set = [&](const char* name, const std::string& v) {
    if (s == NATS_OK) s = natsMsgHeader_Set(msg, name, v.c_str());
  };
  set("Natcd-Op", op);
  set("Natcd-Revision", std::to_string(event.kv.mod_revision));
  set("Natcd-Create-Revision", std::to_string(event.kv.create_revision));
  set("Natcd-Version", std::to_string(event.kv.version));
  if (event.kv.lease != 0) set("Natcd-Lease", LeaseIdHex(event.kv.lease));
  set("Natcd-Key", KeyToHeaderValue(event.kv.key));
  if (s != NATS_OK) {
    natsMsg_Destroy(msg);
    return nullptr;
  }
  return msg;
}

void EventPublisher::Publish(const std::vector<Event>& events) {
  uint64_t published = 0;
  uint64_t dropped = 0;
  for (const Event& event : events) {
    std::string subject = EventSubject(prefix_, event.kv.key);
    if (subject.size() > kEventSubjectBytesMax) {
      // nats-server drops a connection whose control line passes 4 KiB:
      // such keys are left to watches.
      ++dropped;
      continue;
    }
    natsMsg* msg = BuildMessage(subject, event);
    const natsStatus s = msg != nullptr ? natsConnection_PublishMsg(nc_, msg) : NATS_NO_MEMORY;
    natsMsg_Destroy(msg);
    if (s == NATS_OK) {
      ++published;
    } else {
      ++dropped;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  published_ += published;
  dropped_ += dropped;
}

}  // namespace natcd::nats
