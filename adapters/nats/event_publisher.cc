#include "adapters/nats/event_publisher.h"

#include <string>

#include "adapters/nats/subject.h"

namespace natcd::nats {

size_t EventPublisher::Publish(const std::vector<Event>& events) {
  size_t failed = 0;
  for (const Event& event : events) {
    const bool put = event.type == Event::Type::kPut;
    std::string subject = EventSubject(prefix_, event.kv.key);
    if (subject.size() > kEventSubjectBytesMax) {
      // nats-server drops a connection whose control line passes 4 KiB:
      // such keys are left to watches.
      ++skipped_;
      continue;
    }
    natsMsg* msg = nullptr;
    natsStatus s =
        natsMsg_Create(&msg, subject.c_str(), nullptr, put ? event.kv.value.data() : nullptr,
                       put ? static_cast<int>(event.kv.value.size()) : 0);
    auto set = [&](const char* name, const std::string& value) {
      if (s == NATS_OK) s = natsMsgHeader_Set(msg, name, value.c_str());
    };
    set("Natcd-Op", put ? "PUT" : "DEL");
    set("Natcd-Revision", std::to_string(event.kv.mod_revision));
    set("Natcd-Create-Revision", std::to_string(event.kv.create_revision));
    set("Natcd-Version", std::to_string(event.kv.version));
    if (event.kv.lease != 0) set("Natcd-Lease", LeaseIdHex(event.kv.lease));
    set("Natcd-Key", KeyToHeaderValue(event.kv.key));
    if (s == NATS_OK) s = natsConnection_PublishMsg(nc_, msg);
    natsMsg_Destroy(msg);
    if (s == NATS_OK) {
      ++published_;
    } else {
      ++failed;
    }
  }
  return failed;
}

}  // namespace natcd::nats
