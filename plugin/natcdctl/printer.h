// natcdctl: etcdctl's output formats (-w simple|json|fields|table) for the
// responses of the C client library.
#pragma once

#include <string>
#include <vector>

#include "natcd/client.h"

namespace natcdctl {

enum class Format { kSimple, kJson, kFields, kTable };

struct GetFlags {
  bool keys_only = false;
  bool count_only = false;
  bool value_only = false;
};

struct Printer {
  Format format = Format::kSimple;
  // --hex: simple output prints keys and values as \x-escaped hex (etcdctl's).
  bool hex = false;

  std::string Put(const natcdPutResponse& r) const;
  std::string Get(const natcdRangeResponse& r, const GetFlags& flags) const;
  std::string Del(const natcdDeleteResponse& r) const;
  std::string Txn(const natcdTxnResponse& r) const;
  std::string Grant(const natcdHeader& h, int64_t id, int64_t ttl) const;
  std::string Revoke(int64_t id) const;
  std::string KeepAlive(int64_t id, int64_t ttl) const;
  std::string TimeToLive(const natcdLeaseTimeToLive& r, bool keys) const;
  std::string Leases(const std::vector<int64_t>& ids) const;
  std::string Compaction(const natcdHeader& h, int64_t rev) const;
  // One watch event (its revision stands for the header's).
  std::string WatchEvent(const natcdWatchNotice& n, bool value_only) const;
  // A key and its value on lines of their own (the value alone if value_only).
  std::string KvSimple(const natcdKeyValue& kv, bool value_only) const;
};

// Pieces shared with the maintenance printers.
std::string HeaderJson(const natcdHeader& h);
std::string HeaderFields(const natcdHeader& h);

}  // namespace natcdctl
