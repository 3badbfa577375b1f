#include "support/wire_client.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "adapters/nats/codec/json_codec.h"

namespace natcd::testing {

ProtobufCBinaryData Bytes(const std::string& s) {
  return ProtobufCBinaryData{s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}

ProtobufCBinaryData Bytes(const char* s) {
  return ProtobufCBinaryData{strlen(s), reinterpret_cast<uint8_t*>(const_cast<char*>(s))};
}

WireClient::WireClient(const std::string& url, std::string prefix) : prefix_(std::move(prefix)) {
  natsOptions* opts = nullptr;
  natsOptions_Create(&opts);
  // A comma-separated list is several servers: nats.c's SetURL takes one.
  std::vector<std::string> urls;
  for (size_t start = 0; start <= url.size();) {
    size_t end = url.find(',', start);
    if (end == std::string::npos) end = url.size();
    if (end > start) urls.push_back(url.substr(start, end - start));
    start = end + 1;
  }
  std::vector<const char*> servers;
  for (const std::string& u : urls) servers.push_back(u.c_str());
  natsOptions_SetServers(opts, servers.data(), static_cast<int>(servers.size()));
  natsOptions_SetMaxReconnect(opts, -1);
  natsOptions_SetReconnectWait(opts, 100);
  natsOptions_SetSendAsap(opts, true);
  if (natsConnection_Connect(&nc_, opts) != NATS_OK) nc_ = nullptr;
  natsOptions_Destroy(opts);
}

WireClient::~WireClient() { natsConnection_Destroy(nc_); }

WireReply WireClient::Raw(const std::string& subject, const std::string& body,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          int timeout_ms) {
  WireReply out;
  natsMsg* request = nullptr;
  natsMsg_Create(&request, subject.c_str(), nullptr, body.data(), static_cast<int>(body.size()));
  for (const auto& [name, value] : headers) natsMsgHeader_Set(request, name.c_str(), value.c_str());
  natsMsg* reply = nullptr;
  natsStatus s = natsConnection_RequestMsg(&reply, nc_, request, timeout_ms);
  natsMsg_Destroy(request);
  if (s != NATS_OK) {
    out.code = -1;
    out.error = natsStatus_GetText(s);
    return out;
  }
  const char* value = nullptr;
  if (natsMsgHeader_Get(reply, "Nats-Service-Error-Code", &value) == NATS_OK) {
    out.code = atoi(value);
  }
  if (natsMsgHeader_Get(reply, "Nats-Service-Error", &value) == NATS_OK) out.error = value;
  if (natsMsgHeader_Get(reply, "Content-Type", &value) == NATS_OK) out.content_type = value;
  if (natsMsgHeader_Get(reply, "Natcd-Compact-Revision", &value) == NATS_OK) {
    out.compact_revision = atoll(value);
  }
  out.body.assign(natsMsg_GetData(reply), natsMsg_GetDataLength(reply));
  natsMsg_Destroy(reply);
  return out;
}

WireReply WireClient::Call(const std::string& suffix, const ProtobufCMessage* message,
                           const std::string& request_id, bool json) {
  std::string body;
  if (json) {
    body = nats::MessageToJson(message);
  } else {
    body.resize(protobuf_c_message_get_packed_size(message));
    protobuf_c_message_pack(message, reinterpret_cast<uint8_t*>(body.data()));
  }
  std::vector<std::pair<std::string, std::string>> headers;
  if (json) headers.emplace_back("Content-Type", "application/json");
  if (!request_id.empty()) headers.emplace_back("Natcd-Request-Id", request_id);
  return Raw(Subject(suffix), body, headers);
}

int64_t WireClient::Put(const std::string& key, const std::string& value, int64_t lease) {
  Natcd__V1__PutRequest put;
  natcd__v1__put_request__init(&put);
  put.key = Bytes(key);
  put.value = Bytes(value);
  put.lease = lease;
  WireReply reply = Call("kv.put", &put.base);
  EXPECT_TRUE(reply.ok()) << reply.code << " " << reply.error;
  auto response = Decode<Natcd__V1__PutResponse>(&natcd__v1__put_response__descriptor, reply);
  EXPECT_TRUE(response && response->header);
  return response && response->header ? response->header->revision : 0;
}

Unpacked<Natcd__V1__RangeResponse> WireClient::Range(const std::string& key,
                                                     const std::string& range_end,
                                                     int64_t revision) {
  Natcd__V1__RangeRequest range;
  natcd__v1__range_request__init(&range);
  range.key = Bytes(key);
  range.range_end = Bytes(range_end);
  range.revision = revision;
  WireReply reply = Call("kv.range", &range.base);
  EXPECT_TRUE(reply.ok()) << reply.code << " " << reply.error;
  return Decode<Natcd__V1__RangeResponse>(&natcd__v1__range_response__descriptor, reply);
}

int64_t WireClient::Delete(const std::string& key, const std::string& range_end) {
  Natcd__V1__DeleteRangeRequest del;
  natcd__v1__delete_range_request__init(&del);
  del.key = Bytes(key);
  del.range_end = Bytes(range_end);
  WireReply reply = Call("kv.delete", &del.base);
  EXPECT_TRUE(reply.ok()) << reply.code << " " << reply.error;
  auto response =
      Decode<Natcd__V1__DeleteRangeResponse>(&natcd__v1__delete_range_response__descriptor, reply);
  return response ? response->deleted : -1;
}

int64_t WireClient::Grant(int64_t ttl_s) {
  Natcd__V1__LeaseGrantRequest grant;
  natcd__v1__lease_grant_request__init(&grant);
  grant.ttl = ttl_s;
  WireReply reply = Call("lease.grant", &grant.base);
  EXPECT_TRUE(reply.ok()) << reply.code << " " << reply.error;
  auto response =
      Decode<Natcd__V1__LeaseGrantResponse>(&natcd__v1__lease_grant_response__descriptor, reply);
  return response ? response->id : 0;
}

}  // namespace natcd::testing
