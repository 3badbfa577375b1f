// The fault harness's checkers: each reads the histories (history.h) and
// the committed history read back at the end, and appends what it finds
// wrong to a CheckReport.
//
// - Linearizability of the KV history, with the project's checker
//   (tests/raft/sim/linearizability.h): an unknown write may take effect at
//   any time after its call, or never; a read that failed is left out.
// - No acknowledged write lost: an acknowledged put (or successful CAS) at
//   revision r is the committed event of revision r, and its key's final
//   mod_revision is >= r.
// - Writes applied once, and only writes that were made: every committed
//   value was written by some operation of the history (not a failed one),
//   once; an acknowledged one at the revision it was acknowledged with;
//   every read returned a committed (key, value, mod_revision).
// - The committed history agrees with the store: the final state is the
//   events replayed, and so is a range at a sample of past revisions.
// - Watches: every live watch delivered exactly the committed events, in
//   revision order, each once, up to the end revision.
// - Leases: a kept-alive lease's key is never deleted while the lease
//   lives (a renewal that found the lease after a read missed its key); an
//   abandoned lease's key is not gone before its TTL, and is gone within
//   TTL + slack.
// - Locks: holders never overlap beyond a slack (a session's lease may end
//   on the server a little before its holder notices), and fencing
//   revisions grow with each new holder.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "faults/history.h"

namespace natcd::testing {

struct CheckReport {
  std::vector<std::string> anomalies;  // safety violations: the run fails
  std::vector<std::string> notes;      // figures, inconclusive checks
  bool ok() const { return anomalies.empty(); }
  std::string ToString() const;
};

// The store's history of the KV prefix as read back after the run.
struct CommittedHistory {
  std::vector<WatchEvent> events;  // from revision 1 to end_revision
  int64_t end_revision = 0;
  // key -> (value, mod_revision) from a range of the prefix at end_revision.
  std::map<std::string, std::pair<std::string, int64_t>> final_state;
  // revision -> the prefix's state at that revision, from ranges at it.
  std::map<int64_t, std::map<std::string, std::string>> sampled_states;
};

void CheckLinearizable(const std::vector<KvRecord>& records, CheckReport* report);
void CheckCommitted(const std::vector<KvRecord>& records, const CommittedHistory& committed,
                    CheckReport* report);
void CheckWatch(const std::string& name, const std::vector<WatchEvent>& delivered,
                const CommittedHistory& committed, CheckReport* report);
// end_us: when the lease client stopped reading; slack_us: how late an
// abandoned lease may expire beyond its TTL.
void CheckLeases(const std::vector<LeaseHistory>& leases, int64_t end_us, int64_t slack_us,
                 CheckReport* report);
// slack_us: how long two holders may seem to overlap (the clients' view of
// when a lease ended is late by up to a renewal's round trip).
void CheckLocks(const std::vector<LockHold>& holds, int64_t slack_us, CheckReport* report);

// Availability of writes around one fault.
struct Availability {
  std::string fault;
  int64_t longest_gap_us = 0;  // no write acknowledged, from the fault's begin to end + 5 s
  int writes = 0;              // invoked from begin + settle to end
  int writes_ok = 0;
  int writes_unknown = 0;
  int64_t median_write_us = 0;  // of those acknowledged
  int64_t max_write_us = 0;
  int reads = 0;  // linearizable reads invoked from begin + settle to end
  int reads_ok = 0;
  int64_t median_read_us = 0;  // of those answered
  int64_t max_read_us = 0;
  double share_ok() const { return writes == 0 ? 1.0 : double(writes_ok) / writes; }
  std::string ToString() const;
};

Availability MeasureAvailability(const std::vector<KvRecord>& records, const FaultRecord& fault,
                                 int64_t settle_us);
// The longest stretch of the whole run with no write acknowledged.
int64_t LongestWriteGapUs(const std::vector<KvRecord>& records, int64_t begin_us, int64_t end_us);

}  // namespace natcd::testing
