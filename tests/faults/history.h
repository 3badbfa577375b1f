// What the fault harness's clients did and saw: each operation with its
// invocation and completion time (microseconds on the run's steady clock)
// and its outcome, each watch event as it was delivered, each lease
// renewal and read. The checkers (checkers.h) read nothing else.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace natcd::testing {

// The run's clock: microseconds since the run began.
class RunClock {
 public:
  RunClock() : epoch_(std::chrono::steady_clock::now()) {}
  int64_t NowUs() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                 epoch_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point epoch_;
};

enum class Outcome : uint8_t {
  kOk,       // acknowledged
  kFailed,   // a definite refusal (400...): it did not take effect
  kUnknown,  // no answer (timeout, no responders, connection lost): it may
             // have taken effect, then or later
};

const char* OutcomeName(Outcome outcome);

struct KvRecord {
  enum class Kind : uint8_t { kPut, kCas, kGet };
  Kind kind = Kind::kGet;
  int client = 0;
  std::string key;
  std::string value;     // kPut, kCas: the value written (unique in the run)
  std::string expected;  // kCas: the value it must find ("" = absent)
  int64_t call_us = 0;
  int64_t ret_us = 0;
  Outcome outcome = Outcome::kUnknown;
  std::string output;        // kGet: the value read ("" = absent)
  bool cas_ok = false;       // kCas: the compare held
  int64_t revision = 0;      // the response header's revision (kOk)
  int64_t mod_revision = 0;  // kGet: the key's mod_revision (0 = absent)
  bool is_write() const { return kind != Kind::kGet; }
};

struct WatchEvent {
  int64_t revision = 0;
  bool is_delete = false;
  std::string key;
  std::string value;
  bool last_in_revision = false;
  int64_t at_us = 0;
};

// Renewals and reads of one lease.
struct LeaseRecord {
  enum class Kind : uint8_t { kKeepAlive, kRead };
  Kind kind = Kind::kRead;
  int64_t call_us = 0;
  int64_t ret_us = 0;
  bool ok = false;       // the call was answered
  bool present = false;  // kKeepAlive: the lease exists; kRead: its key exists
};

struct LeaseHistory {
  int64_t id = 0;
  std::string key;
  int64_t granted_ttl_s = 0;
  int64_t grant_call_us = 0;
  int64_t grant_ret_us = 0;
  bool kept_alive = false;  // renewed by the harness; else abandoned at once
  std::vector<LeaseRecord> records;
};

// One holding of a lock (etcd's mutex recipe: the holder's key under the
// lock's prefix, created with its session's lease; the holder is the
// oldest key). Its fencing revision is its key's create revision: every
// later holder's is larger, and a resource guarded by the lock refuses
// writes carrying an older one.
struct LockHold {
  int client = 0;
  int64_t fencing_revision = 0;
  int64_t acquire_call_us = 0;
  int64_t acquired_us = 0;  // the acquire returned: held from here at the latest
  // Held until here at the latest: the release's call, or when its
  // session's lease may have ended (the last renewal that found it + TTL).
  int64_t released_us = 0;
};

// A fault as the nemesis applied it.
struct FaultRecord {
  std::string kind;    // "pause-leader", "kill-member"...
  std::string target;  // "m2", "nats-1"...
  int64_t begin_us = 0;
  int64_t end_us = 0;  // healed
};

// Thread-safe: clients append concurrently.
class KvHistory {
 public:
  void Add(KvRecord record) {
    std::lock_guard<std::mutex> lock(mu_);
    records_.push_back(std::move(record));
  }
  std::vector<KvRecord> Snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return records_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<KvRecord> records_;
};

}  // namespace natcd::testing
