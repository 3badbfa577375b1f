// Making a whole file durable under its final name: write it under a
// temporary name, SyncFile it, then RenameDurably it into place. A crash at
// any point leaves either no file under the final name or the complete one,
// never a torn one -- which SQLite cannot promise for files it did not
// write through its journal (VACUUM INTO's output, a received snapshot).
//
// Errors are IOError Statuses naming the path and errno's text.
// Thread safety: plain system calls; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "natcd/status.h"

namespace natcd {

// fsync(2) of the file at path: its data and size are on disk.
Status SyncFile(const std::string& path);

// rename(2) from -> to (replacing to), then fsync of the directory holding
// to, so the new name survives a power loss. Both paths must be on the
// same file system (in practice: the same directory).
Status RenameDurably(const std::string& from, const std::string& to);

// unlink(2) that treats a missing file as success.
Status RemoveFileIfExists(const std::string& path);

// An IOError for a failed system call: "what path: strerror(err)".
Status ErrnoStatus(std::string_view what, const std::string& path, int err);

}  // namespace natcd
