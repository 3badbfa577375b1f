#include "alarm/initial_hash_check.h"

#include <cinttypes>
#include <cstdio>

namespace natcd::alarm {
namespace {

// etcd's types.ID.String(): hex, no padding.
std::string IdText(uint64_t id) {
  char buf[17];
  snprintf(buf, sizeof buf, "%" PRIx64, id);
  return buf;
}

std::string Local(uint64_t self, const HashKVResponse& own) {
  char buf[160];
  snprintf(buf, sizeof buf,
           "local-member-id %s, local-member-revision %" PRId64
           ", local-member-compact-revision %" PRId64 ", local-member-hash %" PRIu32,
           IdText(self).c_str(), own.hash_revision, own.compact_revision, own.hash);
  return buf;
}

}  // namespace

Status JudgeInitialHashes(uint64_t self, const HashKVResponse& own,
                          const std::vector<PeerHashAnswer>& peers, std::vector<std::string>* log) {
  int mismatches = 0;
  for (const PeerHashAnswer& p : peers) {
    const std::string remote = "remote-peer-id " + IdText(p.member_id);
    if (!p.answer.ok()) {
      const Status& error = p.answer.status();
      const char* what = error.IsFutureRevision() ? "cannot fetch hash from slow remote peer"
                         : error.IsCompacted()
                             ? "cannot fetch hash from remote peer; local member is behind"
                             : "failed hash kv request";
      log->push_back(std::string(what) + " (" + Local(self, own) + ", " + remote +
                     "): " + error.ToString());
      continue;
    }
    const HashKVResponse& theirs = p.answer.value();
    if (theirs.hash == own.hash) continue;
    char fields[160];
    snprintf(fields, sizeof fields,
             ", remote-peer-revision %" PRId64 ", remote-peer-compact-revision %" PRId64
             ", remote-peer-hash %" PRIu32,
             theirs.hash_revision, theirs.compact_revision, theirs.hash);
    if (theirs.compact_revision == own.compact_revision) {
      log->push_back("found different hash values from remote peer (" + Local(self, own) + ", " +
                     remote + fields + ")");
      ++mismatches;
    } else {
      log->push_back("found different compact revision values from remote peer (" +
                     Local(self, own) + ", " + remote + fields + ")");
    }
  }
  if (mismatches > 0) {
    return Status::Corruption(IdText(self) + " found data inconsistency with peers");
  }
  log->push_back("initial corruption checking passed; no corruption (local-member-id " +
                 IdText(self) + ")");
  return Status::OK();
}

}  // namespace natcd::alarm
