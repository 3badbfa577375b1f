// Restoring a backup (storage/backup_file.h) as the database of a member of
// a NEW cluster, as etcdutl's `snapshot restore` does: the keys, their
// whole uncompacted history, the compact revision and the leases stay; the
// old cluster's Raft state goes (its log, hard state, snapshot metadata,
// member names and client URLs), as do the remembered outcomes of
// idempotent requests and the applied index. A member started on it with
// `--initial-cluster-state new` and `--initial-cluster` naming the new
// members then founds the cluster as natcd always does (a first snapshot
// at index 1 naming the voters: Member::Impl::Found) over a store that is
// already at the backup's revision; each member of the new cluster is
// restored from the same file. The cluster ID comes from the flags the
// members start with (server/member_identity.h: the prefix and
// --cluster-name), not from the file.
//
// Thread safety: a plain function over files the caller names.
#pragma once

#include <string>

#include "natcd/status.h"
#include "storage/backup_file.h"

namespace natcd::server {

struct RestoredBackup {
  ExtractedBackup backup;  // the file's checked trailer and hash
  DatabaseFacts facts;     // what the restored database holds
};

// Checks the backup at backup_path and writes the restored database to
// db_path (through db_path + ".tmp", fsync'd and renamed into place).
// The directory holding db_path must exist; db_path must not.
// Errors: InvalidArgument (ErrDataDirExists) when db_path exists; NotFound
// when the backup does not; Corruption when it is damaged (size, SHA-256,
// SQLite's quick_check) or not natcd's; IOError. Nothing is left at db_path
// on error.
Result<RestoredBackup> RestoreBackup(const std::string& backup_path, const std::string& db_path);

}  // namespace natcd::server
