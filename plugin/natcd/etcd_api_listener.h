// The daemon's etcd gRPC API (adapters/grpc/) as one of the node's front
// ends: --listen-client-urls, or for the embedded default 127.0.0.1:2379
// (etcd's client port; a free port when that one is taken).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "adapters/grpc/etcd_grpc_server.h"
#include "adapters/nats/node.h"

namespace natcd {

struct EtcdApiSettings {
  etcd_api::GrpcServerOptions server;
  // Nothing configured, embedded default: 2379, else any free port.
  bool embedded_default = false;
  Clock* clock = nullptr;
};

// The factory for NodeOptions::front_ends. *urls receives the URLs it
// listens on once it is built.
nats::FrontEndFactory EtcdApiFrontEnd(EtcdApiSettings settings, std::vector<std::string>* urls);

// Comma-separated URLs as a list (empty entries dropped).
std::vector<std::string> SplitUrls(const std::string& urls);

}  // namespace natcd
