// Status and Result<T>: how every natcd module reports an operating error.
//
// No exception crosses a module boundary. A Status is either OK (cheap: no
// allocation) or a code plus a message; the codes carry etcd's meaning so the
// adapter can map them to an etcd error name and a NATS service-error code in
// one place. Programmer errors are assertions, not Statuses.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace natcd {

class [[nodiscard]] Status {
 public:
  // DO NOT CHANGE the numeric values: they are persisted with remembered
  // responses of idempotent requests.
  enum class Code : uint8_t {
    kOk = 0,
    kInvalidArgument = 1,  // malformed request (etcd: InvalidArgument)
    kNotFound = 2,         // e.g. ErrKeyNotFound for ignore_value
    kCompacted = 3,        // ErrCompacted; message carries the compact revision
    kFutureRevision = 4,   // ErrFutureRev
    kLeaseNotFound = 5,    // ErrLeaseNotFound
    kLeaseExists = 6,      // ErrLeaseExist
    kTooLarge = 7,         // ErrRequestTooLarge
    kTooManyRequests = 8,  // ErrTooManyRequests
    kUnavailable = 9,      // no leader, stopped, engine failed
    kNotLeader = 10,       // ErrNotLeader
    kBusy = 11,            // SQLite BUSY/LOCKED
    kIOError = 12,         // disk errors; the store must be reopened
    kCorruption = 13,      // on-disk data is not what natcd wrote
    kInternal = 14,        // a bug: should not happen
    kTimeout = 15,
    kLogCompacted = 16,      // Raft: the entries asked for were compacted away
    kLeaseTTLTooLarge = 17,  // ErrLeaseTTLTooLarge (etcd: OutOfRange, not a request too large)
    kNoSpace = 18,           // ErrNoSpace: the NOSPACE alarm or the backend quota
  };

  Status() = default;
  Status(Code code, std::string_view etcd_name, std::string_view message)
      : rep_(code == Code::kOk ? nullptr
                               : std::make_shared<Rep>(
                                     Rep{code, std::string(etcd_name), std::string(message), 0})) {}

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string_view name, std::string_view msg) {
    return Status(Code::kInvalidArgument, name, msg);
  }
  static Status NotFound(std::string_view name, std::string_view msg) {
    return Status(Code::kNotFound, name, msg);
  }
  // ErrCompacted. compact_revision is kept as a number for the watch
  // cancel reply.
  static Status Compacted(int64_t required, int64_t compact_revision);
  static Status FutureRevision(int64_t required, int64_t current);
  static Status LeaseNotFound(int64_t id);
  static Status LeaseExists(int64_t id);
  static Status TooLarge(std::string_view name, std::string_view msg) {
    return Status(Code::kTooLarge, name, msg);
  }
  static Status Unavailable(std::string_view name, std::string_view msg) {
    return Status(Code::kUnavailable, name, msg);
  }
  static Status IOError(std::string_view msg) { return Status(Code::kIOError, "ErrIO", msg); }
  static Status Busy(std::string_view msg) { return Status(Code::kBusy, "ErrBusy", msg); }
  static Status Corruption(std::string_view msg) {
    return Status(Code::kCorruption, "ErrCorrupt", msg);
  }
  static Status Internal(std::string_view msg) {
    return Status(Code::kInternal, "ErrInternal", msg);
  }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  bool IsCompacted() const { return code() == Code::kCompacted; }
  bool IsFutureRevision() const { return code() == Code::kFutureRevision; }
  bool IsLeaseNotFound() const { return code() == Code::kLeaseNotFound; }
  bool IsInvalidArgument() const { return code() == Code::kInvalidArgument; }
  bool IsNotFound() const { return code() == Code::kNotFound; }

  // The etcd error name, e.g. "ErrCompacted"; empty when OK.
  std::string_view name() const { return rep_ ? std::string_view(rep_->name) : ""; }
  // etcd's message, e.g. "etcdserver: mvcc: required revision has been compacted".
  std::string_view message() const { return rep_ ? std::string_view(rep_->message) : ""; }
  // For kCompacted: the compact revision. 0 otherwise.
  int64_t compact_revision() const { return rep_ ? rep_->compact_revision : 0; }
  // "ErrName: message", or "OK".
  std::string ToString() const;

 private:
  struct Rep {
    Code code;
    std::string name;
    std::string message;
    int64_t compact_revision;
  };
  // Immutable once built, so copies share it.
  std::shared_ptr<const Rep> rep_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "a Result built from a Status must carry an error");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

// Propagates a non-OK Status to the caller.
#define NATCD_RETURN_IF_ERROR(expr) \
  do {                              \
    ::natcd::Status _st = (expr);   \
    if (!_st.ok()) return _st;      \
  } while (0)

}  // namespace natcd
