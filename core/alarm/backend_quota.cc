#include "alarm/backend_quota.h"

#include <algorithm>

namespace natcd {
namespace {

int64_t BranchCost(const std::vector<RequestOp>& branch) {
  int64_t cost = 0;
  for (const RequestOp& op : branch) {
    if (const auto* put = std::get_if<PutRequest>(&op.op)) {
      cost += QuotaCost(*put);
    } else if (const auto* txn = std::get_if<std::shared_ptr<TxnRequest>>(&op.op)) {
      if (*txn != nullptr) cost += QuotaCost(**txn);
    }
  }
  return cost;
}

}  // namespace

int64_t QuotaCost(const PutRequest& r) {
  return kKvOverheadBytes + static_cast<int64_t>(r.key.size() + r.value.size());
}

int64_t QuotaCost(const TxnRequest& t) {
  return std::max(BranchCost(t.success), BranchCost(t.failure));
}

int64_t QuotaCost(const LeaseGrantRequest&) { return kLeaseOverheadBytes; }

int64_t QuotaBytesFromFlag(int64_t flag) {
  if (flag < 0) return 0;
  return flag == 0 ? kDefaultQuotaBytes : flag;
}

bool QuotaAvailable(int64_t quota_bytes, int64_t db_size_bytes, int64_t cost) {
  if (quota_bytes <= 0 || cost == 0) return true;
  return db_size_bytes + cost < quota_bytes;
}

}  // namespace natcd
