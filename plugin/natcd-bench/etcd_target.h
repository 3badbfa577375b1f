// etcd's gRPC API (etcd's, or natcd's gRPC front end), with grpc++'s generic stub: the request
// bytes are etcd_messages.h's (natcd.proto's messages, etcd's field numbers), sent to etcd's method
// names ("/etcdserverpb.KV/Put"...). No etcd code and no generated etcd stubs: the bytes are the
// contract.
//
// Unary calls use the callback API (one call per slot in flight); lease
// keep-alives use one LeaseKeepAlive stream per slot, as one etcd client
// per slot would; watchers share one Watch stream, as clientv3 multiplexes
// the watches of one client.
//
// Built only when grpc++ is installed (pkg-config grpc++): NATCD_BENCH_ETCD.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plugin/natcd-bench/target.h"

namespace natcd::bench {

class EtcdTarget final : public Target {
 public:
  // endpoint: "127.0.0.1:<client port>"; name: the system in the report
  // (etcd, or natcd's own gRPC API: "natcd (gRPC)").
  explicit EtcdTarget(const std::string& endpoint, std::string name = "etcd");
  ~EtcdTarget() override;

  std::string name() const override { return name_; }
  bool Supports(Op) const override { return true; }
  bool BeginLoad(int slots, ReplySink* sink) override;
  void Issue(int slot, Op op, uint64_t i) override;
  void EndLoad() override;
  bool PrepareKeepAlive() override;
  void ReserveLeases(uint64_t leases) override;
  void SetLeaseTtl(int64_t seconds) override;
  bool ResetCounter() override;
  bool ReadCounter(Counter* out) override;
  CasOutcome SwapCounter(const Counter& seen, Counter* now, bool* now_known) override;
  bool OpenWatchers(int watchers, EventSink* sink) override;
  void CloseWatchers() override;
  int64_t CountKeys(const std::string& space) override;

  // Waits (bounded) until etcd answers a read: it is serving.
  bool WaitReady(int64_t timeout_ms);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  const std::string name_;
};

}  // namespace natcd::bench
