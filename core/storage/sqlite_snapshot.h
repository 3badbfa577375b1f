// The state machine's snapshot is its SQLite database. WriteDatabaseSnapshot
// copies a live database -- one the engine keeps writing on its own
// connection -- into a file fit to ship to a member that is behind the
// leader's kept Raft log.
//
// The copy is taken through a second, read-only connection with
// VACUUM INTO. In WAL mode a reader sees one commit and is never blocked by
// the writer (nor blocks it), so the copy is the database exactly as of one
// commit: every row of that commit and of those before it, nothing of a
// later one. VACUUM also leaves out free pages, so the copy is no larger
// than the data. It is a plain (rollback-journal) database file that
// SqliteBackend opens like any other.
//
// Thread safety: the function owns its connection; it may run on any
// thread while another thread writes the database through SqliteBackend.
// The engine's writes go on, but the WAL cannot be checkpointed past the
// copy's commit until it ends, so the WAL grows meanwhile.
#pragma once

#include <cstdint>
#include <string>

#include "natcd/status.h"

namespace natcd {

// Writes a consistent copy of the natcd database at db_path to out_path,
// through out_path + ".tmp" (replaced if present), fsync'd and renamed into
// place, so out_path is either absent/unchanged or complete. Returns the
// copy's applied Raft index (the meta table's applied_index; 0 if never
// written): the Raft index the snapshot stands for.
//
// Errors: NotFound when db_path does not exist; Corruption when it is not a
// natcd database; IOError / Busy from SQLite or the file system (out_path is
// then left as it was and the temporary file removed).
Result<uint64_t> WriteDatabaseSnapshot(const std::string& db_path, const std::string& out_path);

}  // namespace natcd
