// The canonical bytes natcd's hashes (HashKV, Hash) cover, and the CRC-32C
// (Castagnoli, as etcd's crc32.MakeTable(crc32.Castagnoli)) over them.
//
// The hashes are compared between members running the same natcd version,
// never with etcd's numbers: etcd hashes its bolt keys and values (a
// protobuf KeyValue per revision), natcd the encoding below, so the same
// history gives a different number on etcd. Changing the encoding makes
// members of two versions disagree (a rolling upgrade would see a false
// mismatch): treat it as frozen; tests/core/mvcc/revision_hash_test.cc pins it.
//
// One stored write (a row of the kv table), all integers little-endian:
//   rev      int64   the revision of the write (its mod revision)
//   sub      int64   its sub-revision within that revision
//   kind     uint8   0: a put, 1: a delete (tombstone)
//   key_len  uint64, then key_len bytes of key
//   for a put only:
//     create_revision int64, version int64, lease int64,
//     value_len uint64, then value_len bytes of value
// Rows are hashed in (rev, sub) order, each row's bytes in turn.
//
// One lease (Hash only): id int64, ttl int64, remaining_ms int64.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "storage/sqlite_backend.h"

namespace natcd {

// crc extended with the row's canonical bytes (Crc32cExtend semantics).
uint32_t HashRevisionRow(uint32_t crc, const RevisionRow& row);
uint32_t HashLeaseRow(uint32_t crc, const LeaseRow& lease);

}  // namespace natcd
