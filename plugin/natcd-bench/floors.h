// The two limits every figure is read against, measured in the same run:
//
// - the echo floor: a bare nats.c request-reply service that answers each
//   request with its own body (run as `natcd-bench echo-server`, a process
//   of its own like natcd). No NATS service can answer faster on this
//   machine. EchoTarget drives it with the same loads as the systems.
// - the fsync floor: write 100 bytes into a preallocated file and
//   fdatasync, in the folder the systems keep their data in. No durable
//   single write can be faster.
#pragma once

#include <nats/nats.h>

#include <string>

#include "plugin/natcd-bench/histogram.h"
#include "plugin/natcd-bench/nats_requests.h"
#include "plugin/natcd-bench/target.h"

namespace natcd::bench {

// The echo service: subscribes to subject and answers every request with
// its body until SIGINT/SIGTERM. Prints "serving" once subscribed.
int RunEchoServer(const std::string& url, const std::string& subject);

// Sends the 100-byte value of a put as the request; any reply is a success.
class EchoTarget final : public Target {
 public:
  EchoTarget(natsConnection* nc, std::string subject) : nc_(nc), subject_(std::move(subject)) {}
  std::string name() const override { return "echo floor"; }
  bool Supports(Op op) const override { return op == Op::kPut || op == Op::kGet; }
  bool BeginLoad(int slots, ReplySink* sink) override;
  void Issue(int slot, Op op, uint64_t i) override;
  void EndLoad() override { requests_.End(); }
  bool ResetCounter() override { return false; }
  bool ReadCounter(Counter*) override { return false; }
  CasOutcome SwapCounter(const Counter&, Counter*, bool*) override { return CasOutcome::kError; }
  bool OpenWatchers(int, EventSink*) override { return false; }
  void CloseWatchers() override {}

 private:
  natsConnection* const nc_;
  const std::string subject_;
  NatsRequests requests_;
};

struct FsyncResult {
  uint64_t syncs = 0;
  double seconds = 0;
  Histogram latency;
  std::string error;  // empty on success
  double per_second() const { return seconds > 0 ? syncs / seconds : 0; }
};
// Writes 100 bytes at the next 4 KiB block of a 16 MiB file written and
// synced beforehand, and fdatasyncs, one after another, for duration_ms; the
// file is created in dir and removed. With busy_cpus, that many threads spin
// meanwhile at the lowest priority (SCHED_IDLE): on a virtual machine an idle vCPU may take a timer
// tick (4 ms here) to wake for the I/O completion, which a loaded server never waits for; measured
// both ways, the floor is the better one.
FsyncResult MeasureFsync(const std::string& dir, int64_t duration_ms, int busy_cpus);

}  // namespace natcd::bench
