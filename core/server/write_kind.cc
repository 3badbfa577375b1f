#include "server/write_kind.h"

namespace natcd::server {

const char* WriteKindName(WriteKind kind) {
  switch (kind) {
    case WriteKind::kPut:
      return "put";
    case WriteKind::kDeleteRange:
      return "delete";
    case WriteKind::kTxn:
      return "txn";
    case WriteKind::kCompaction:
      return "compaction";
    case WriteKind::kLeaseGrant:
      return "lease grant";
    case WriteKind::kLeaseRevoke:
      return "lease revoke";
    case WriteKind::kLeaseExpire:
      return "lease expiry";
    case WriteKind::kLeaseCheckpoint:
      return "lease checkpoint";
  }
  return "unknown write";
}

}  // namespace natcd::server
