#include "natcd/status.h"

#include <string>

namespace natcd {

Status Status::Compacted(int64_t required, int64_t compact_revision) {
  Status s(Code::kCompacted, "ErrCompacted",
           "etcdserver: mvcc: required revision " + std::to_string(required) +
               " has been compacted; compact revision is " + std::to_string(compact_revision));
  auto rep = std::make_shared<Rep>(*s.rep_);
  rep->compact_revision = compact_revision;
  s.rep_ = std::move(rep);
  return s;
}

Status Status::FutureRevision(int64_t required, int64_t current) {
  return Status(Code::kFutureRevision, "ErrFutureRev",
                "etcdserver: mvcc: required revision " + std::to_string(required) +
                    " is a future revision; current revision is " + std::to_string(current));
}

Status Status::LeaseNotFound(int64_t id) {
  return Status(Code::kLeaseNotFound, "ErrLeaseNotFound",
                "etcdserver: requested lease not found (lease " + std::to_string(id) + ")");
}

Status Status::LeaseExists(int64_t id) {
  return Status(Code::kLeaseExists, "ErrLeaseExist",
                "etcdserver: lease already exists (lease " + std::to_string(id) + ")");
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(name());
  out += ": ";
  out += message();
  return out;
}

}  // namespace natcd
