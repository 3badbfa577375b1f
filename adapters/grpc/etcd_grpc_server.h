// EtcdGrpcServer: etcd's v3 gRPC API on TCP (docs/PROTOCOL.md "etcd's gRPC
// API"), served by the member: KV, Watch, Lease, Cluster, Maintenance and
// grpc.health.v1, through grpc++'s callback generic service (every method
// arrives as a stream of byte buffers and is decoded here with natcd's
// protobuf-c schema, so both front ends share one codec). Unknown methods
// answer UNIMPLEMENTED.
//
// Listening: etcd's --listen-client-urls (http:// plain, https:// TLS with
// --cert-file/--key-file, client certificates required with
// --client-cert-auth and checked against --trusted-ca-file). SO_REUSEPORT
// is off, so a port another process holds is an error, not a shared port.
//
// Thread safety: Start, StopReceiving and the observers from one thread;
// the calls run on grpc++'s threads and the member thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adapters/grpc/call_context.h"
#include "natcd/status.h"
#include "server/front_end.h"
#include "server/member.h"

namespace natcd::etcd_api {

struct GrpcServerOptions {
  // http://host:port or https://host:port, port 0 for a free one.
  std::vector<std::string> listen_urls;
  // What MemberList reports as this member's client URLs; empty: the
  // listening URLs.
  std::vector<std::string> advertise_urls;
  std::string cert_file;
  std::string key_file;
  std::string trusted_ca_file;
  bool client_cert_auth = false;
  size_t request_bytes_max = 1'572'864;  // etcd's --max-request-bytes
  // Responses a Watch stream may have waiting to be written before its
  // watches are not polled (their events wait in the hub).
  size_t watch_stream_bytes_max = 8 << 20;
  // The member's: streams that require a leader end after three of them
  // without one (LeaderMonitor).
  int64_t election_timeout_ms = 1'000;
  // For the peer URLs members report (P.raft.<cluster>.<member>).
  std::string prefix = "natcd";
  std::string cluster_name = "default";
  // etcd's --bcrypt-cost: of the password hashes UserAdd and
  // UserChangePassword make.
  int bcrypt_cost = 10;
};

class EtcdGrpcServer {
 public:
  // Listens and starts serving; requests wait in the member's queue until
  // it starts. The member outlives the server; `header` carries the
  // cluster's and this member's IDs.
  static Result<std::unique_ptr<EtcdGrpcServer>> Start(const GrpcServerOptions& options,
                                                       server::Member* member,
                                                       const nats::HeaderInfo& header,
                                                       Clock* clock);
  ~EtcdGrpcServer();
  EtcdGrpcServer(const EtcdGrpcServer&) = delete;
  EtcdGrpcServer& operator=(const EtcdGrpcServer&) = delete;

  // The member's hooks for this front end (watch delivery, the leader monitor).
  server::FrontEnd* front_end();
  // Stops taking calls: open streams are canceled, unary calls in flight
  // are answered by the member (waiting at most until the deadline).
  void StopReceiving(int64_t deadline_ms);

  // The URLs it listens on, with the ports chosen.
  const std::vector<std::string>& urls() const;

 private:
  struct Parts;
  explicit EtcdGrpcServer(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace natcd::etcd_api
