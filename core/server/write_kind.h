// Which write a request or a response is: the alternatives of WriteRequest
// and WriteResponse (core/include/natcd/engine.h), in their order.
#pragma once

#include <cstdint>
#include <variant>

#include "natcd/engine.h"

namespace natcd::server {

// DO NOT CHANGE: persisted. The numbers are LogCommand.Kind in the log
// (natcd.proto) and the kind of a remembered outcome.
enum class WriteKind : uint8_t {
  kPut = 1,
  kDeleteRange = 2,
  kTxn = 3,
  kCompaction = 4,
  kLeaseGrant = 5,
  kLeaseRevoke = 6,
  kLeaseExpire = 7,
  kLeaseCheckpoint = 8,
};

static_assert(std::variant_size_v<WriteRequest> == 8 && std::variant_size_v<WriteResponse> == 8,
              "WriteKind lists every write");

inline WriteKind KindOf(const WriteRequest& request) {
  return static_cast<WriteKind>(request.index() + 1);
}
inline WriteKind KindOf(const WriteResponse& response) {
  return static_cast<WriteKind>(response.index() + 1);
}
// "put", "txn", ... for messages.
const char* WriteKindName(WriteKind kind);

}  // namespace natcd::server
