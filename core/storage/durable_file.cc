#include "storage/durable_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <system_error>

namespace natcd {
namespace {

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// fsync of whatever open(2) with flags gives for path.
Status SyncPath(const std::string& path, int flags) {
  int fd;
  do {
    fd = open(path.c_str(), flags | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    return ErrnoStatus("open", path, err);
  }
  Status s;
  if (fsync(fd) != 0) {
    int err = errno;
    s = ErrnoStatus("fsync", path, err);
  }
  close(fd);
  return s;
}

}  // namespace

Status ErrnoStatus(std::string_view what, const std::string& path, int err) {
  // std::error_code's message, unlike strerror, is safe on any thread.
  return Status::IOError(std::string(what) + " " + path + ": " +
                         std::error_code(err, std::generic_category()).message());
}

Status SyncFile(const std::string& path) { return SyncPath(path, O_RDONLY); }

Status RenameDurably(const std::string& from, const std::string& to) {
  if (rename(from.c_str(), to.c_str()) != 0) {
    int err = errno;
    return ErrnoStatus("rename to " + to + " from", from, err);
  }
  // The rename is an update of the directory: only its fsync makes it stick.
  return SyncPath(DirectoryOf(to), O_RDONLY | O_DIRECTORY);
}

Status RemoveFileIfExists(const std::string& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    int err = errno;
    return ErrnoStatus("unlink", path, err);
  }
  return Status::OK();
}

}  // namespace natcd
