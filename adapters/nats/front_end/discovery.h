// NATS micro-services discovery (ADR-32): natcd answers $SRV.PING, $SRV.INFO
// and $SRV.STATS (alone, with the service name, and with name and instance
// id) with the standard JSON, so NATS tooling lists natcd members and their
// endpoint statistics. Every instance answers (plain subscriptions).
#pragma once

#include <string>
#include <vector>

#include "adapters/nats/codec/endpoint.h"

namespace natcd::nats {

struct ServiceIdentity {
  std::string name = "natcd";
  std::string id;  // instance id
  std::string version;
  std::string description = "natcd: etcd's guarantees over NATS subjects";
  std::string started;  // ISO 8601 UTC
  std::vector<std::pair<std::string, std::string>> metadata;
};

// The subjects to subscribe: $SRV.<VERB>, $SRV.<VERB>.<name>, $SRV.<VERB>.<name>.<id>.
std::vector<std::string> DiscoverySubjects(const ServiceIdentity& identity);
// The JSON answer for a message on subject (null when it is not a discovery
// subject of this instance).
bool DiscoveryResponse(const std::string& subject, const ServiceIdentity& identity,
                       const std::vector<const Endpoint*>& endpoints, std::string* json);
// RFC 3339 UTC with nanoseconds, as nats.go writes `started`.
std::string Iso8601Now();

}  // namespace natcd::nats
