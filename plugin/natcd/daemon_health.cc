#include "plugin/natcd/daemon_health.h"

#include <vector>

#include "adapters/nats/front_end/reply.h"
#include "adapters/nats/natcd.pb-c.h"

namespace natcd {

metrics::HealthState DaemonHealth::Read(bool /*serializable*/) {
  metrics::HealthState state;
  if (natsConnection_Status(nc_) != NATS_CONN_STATUS_CONNECTED) {
    state.api_error = "NATS DISCONNECTED";
    return state;
  }
  Natcd__V1__StatusRequest request = NATCD__V1__STATUS_REQUEST__INIT;
  uint8_t body[16];  // an empty message packs to nothing
  size_t len = natcd__v1__status_request__pack(&request, body);
  natsMsg* reply = nullptr;
  natsStatus s = natsConnection_Request(&reply, nc_, status_subject_.c_str(), body,
                                        static_cast<int>(len), /*timeout_ms=*/1'000);
  if (s != NATS_OK) {
    state.api_error = std::string("STATUS ERROR:") + natsStatus_GetText(s);
    return state;
  }
  const char* service_error = nullptr;
  if (natsMsgHeader_Get(reply, nats::kServiceErrorHeader, &service_error) == NATS_OK) {
    state.api_error = std::string("STATUS ERROR:") + service_error;
    natsMsg_Destroy(reply);
    return state;
  }
  Natcd__V1__StatusResponse* status =
      natcd__v1__status_response__unpack(nullptr, static_cast<size_t>(natsMsg_GetDataLength(reply)),
                                         reinterpret_cast<const uint8_t*>(natsMsg_GetData(reply)));
  natsMsg_Destroy(reply);
  if (status == nullptr) {
    state.api_error = "STATUS ERROR:bad reply";
    return state;
  }
  state.has_leader = status->leader != 0;
  std::vector<std::string> errors(status->errors, status->errors + status->n_errors);
  state.alarms = metrics::AlarmsFromStatusErrors(errors);
  natcd__v1__status_response__free_unpacked(status, nullptr);
  return state;
}

}  // namespace natcd
