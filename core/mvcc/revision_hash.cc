#include "mvcc/revision_hash.h"

#include <string>

#include "storage/crc32c.h"

namespace natcd {
namespace {

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutI64(std::string* out, int64_t v) { PutU64(out, static_cast<uint64_t>(v)); }

}  // namespace

uint32_t HashRevisionRow(uint32_t crc, const RevisionRow& row) {
  // The fixed fields go through a small buffer; key and value are hashed
  // where they are (a value may be 1.5 MiB).
  std::string head;
  head.reserve(8 + 8 + 1 + 8);
  PutI64(&head, row.rev);
  PutI64(&head, row.sub);
  head.push_back(row.tombstone ? 1 : 0);
  PutU64(&head, row.kv.key.size());
  crc = Crc32cExtend(crc, head.data(), head.size());
  crc = Crc32cExtend(crc, row.kv.key.data(), row.kv.key.size());
  if (row.tombstone) return crc;
  std::string tail;
  tail.reserve(4 * 8);
  PutI64(&tail, row.kv.create_revision);
  PutI64(&tail, row.kv.version);
  PutI64(&tail, row.kv.lease);
  PutU64(&tail, row.kv.value.size());
  crc = Crc32cExtend(crc, tail.data(), tail.size());
  return Crc32cExtend(crc, row.kv.value.data(), row.kv.value.size());
}

uint32_t HashLeaseRow(uint32_t crc, const LeaseRow& lease) {
  std::string bytes;
  bytes.reserve(3 * 8);
  PutI64(&bytes, lease.id);
  PutI64(&bytes, lease.ttl_s);
  PutI64(&bytes, lease.remaining_ms);
  return Crc32cExtend(crc, bytes.data(), bytes.size());
}

}  // namespace natcd
