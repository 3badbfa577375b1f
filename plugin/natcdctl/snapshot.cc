// natcdctl snapshot save / status / restore: etcdctl's `snapshot save` (an
// online backup over NATS, P.maint.snapshot) and etcdutl's `snapshot
// status` and `snapshot restore`, which work on the file alone (no
// connection) through core/'s backup format (storage/backup_file.h,
// server/backup_restore.h).
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <set>

#include "plugin/natcdctl/commands.h"
#include "plugin/natcdctl/format.h"
#include "server/backup_restore.h"
#include "storage/backup_file.h"
#include "storage/durable_file.h"

namespace natcdctl {
namespace {

// natcd keeps its database here in its --data-dir (plugin/natcd/main.cc).
constexpr const char* kDatabaseFile = "/natcd.db";

int Save(Context& ctx, const std::string& path) {
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdSnapshotInfo info{};
  natcdStatus s = natcdMaint_SnapshotSave(&info, c.client, 0, path.c_str());
  if (s != natcdStatus_OK) return LibFail(s);
  Write("Snapshot saved at " + path + "\n");
  return 0;
}

// The database part of a backup in a temporary file, removed on every path.
class ExtractedCopy {
 public:
  ~ExtractedCopy() {
    if (!path_.empty()) (void)natcd::RemoveFileIfExists(path_);
  }
  natcd::Status Make() {
    const char* dir = getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/natcdctl-snapshot-XXXXXX";
    int fd = mkstemp(pattern.data());
    if (fd < 0) return natcd::ErrnoStatus("mkstemp", pattern, errno);
    close(fd);
    path_ = pattern;
    return natcd::Status::OK();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The error of a file operation as etcdctl prints one: "Error: <text>".
int FileFail(const natcd::Status& s) {
  return Fail(kExitError, std::string(s.message().empty() ? s.ToString() : s.message()));
}

int Status(Context& ctx, const std::string& path) {
  ExtractedCopy copy;
  natcd::Status made = copy.Make();
  if (!made.ok()) return FileFail(made);
  natcd::Result<natcd::ExtractedBackup> backup = natcd::ExtractBackup(path, copy.path());
  if (!backup.ok()) return FileFail(backup.status());
  natcd::Result<natcd::DatabaseFacts> facts = natcd::ReadDatabaseFacts(copy.path());
  if (!facts.ok()) return FileFail(facts.status());
  char hash[16];
  snprintf(hash, sizeof hash, "%x", backup->crc32c);
  const std::string revision = std::to_string(facts->revision);
  const std::string keys = std::to_string(facts->total_keys);
  const uint64_t size = backup->database_bytes;
  // etcdctl's printers for snapshot.Status.
  switch (ctx.printer.format) {
    case Format::kJson:
      Write("{\"hash\":" + std::to_string(backup->crc32c) + ",\"revision\":" + revision +
            ",\"totalKey\":" + keys + ",\"totalSize\":" + std::to_string(size) + "}\n");
      break;
    case Format::kTable:
      Write(Table({"hash", "revision", "total keys", "total size"},
                  {{hash, revision, keys, HumanBytes(size)}}));
      break;
    case Format::kFields:
      Write("\"Hash\" : " + std::to_string(backup->crc32c) + "\n\"Revision\" : " + revision +
            "\n\"Keys\" : " + keys + "\n\"Size\" : " + std::to_string(size) + "\n");
      break;
    default:
      Write(std::string(hash) + ", " + revision + ", " + keys + ", " + HumanBytes(size) + "\n");
  }
  return 0;
}

struct RestoreArgs {
  std::string file;
  std::string data_dir;
  std::string name = "natcd-1";
  std::string initial_cluster;
  std::string initial_cluster_token;
};

// --initial-cluster as natcd takes it (names, comma-separated) or as
// etcdutl does (name=peer-URL pairs): the names, in order, once each.
bool MemberNames(const std::string& flag, std::vector<std::string>* names, std::string* bad) {
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= flag.size()) {
    size_t comma = flag.find(',', start);
    if (comma == std::string::npos) comma = flag.size();
    std::string item = flag.substr(start, comma - start);
    std::string name = item.substr(0, item.find('='));
    if (name.empty()) {
      *bad = item;
      return false;
    }
    if (seen.insert(name).second) names->push_back(name);
    start = comma + 1;
  }
  return true;
}

bool DirMissingOrEmpty(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return errno == ENOENT;
  if (!S_ISDIR(st.st_mode)) return false;
  return rmdir(dir.c_str()) == 0;  // fails when it holds anything
}

int MakeDirs(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at < dir.size() && dir[at] != '/') continue;
    std::string part = dir.substr(0, at);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return errno;
  }
  return 0;
}

int Restore(const RestoreArgs& a) {
  const std::string data_dir = a.data_dir.empty() ? a.name + ".natcd" : a.data_dir;
  std::vector<std::string> names;
  std::string bad;
  if (!MemberNames(a.initial_cluster.empty() ? a.name : a.initial_cluster, &names, &bad)) {
    return Fail(kExitBadArgs, "bad --initial-cluster member \"" + bad + "\"");
  }
  bool found = false;
  for (const std::string& n : names) found = found || n == a.name;
  if (!found) {
    return Fail(kExitBadArgs,
                "couldn't find local name \"" + a.name + "\" in the initial cluster configuration");
  }
  if (!DirMissingOrEmpty(data_dir)) return Fail(kExitError, "data-dir \"" + data_dir + "\" exists");
  if (int err = MakeDirs(data_dir)) {
    return Fail(kExitError, "cannot create " + data_dir + ": " + strerror(err));
  }
  natcd::Result<natcd::server::RestoredBackup> restored =
      natcd::server::RestoreBackup(a.file, data_dir + kDatabaseFile);
  if (!restored.ok()) {
    rmdir(data_dir.c_str());  // the one made here, empty again
    return FileFail(restored.status());
  }
  std::string cluster;
  for (const std::string& n : names) cluster += (cluster.empty() ? "" : ",") + n;
  std::string start = "natcd --data-dir " + data_dir + " --name " + a.name + " --initial-cluster " +
                      cluster + " --initial-cluster-state new";
  if (!a.initial_cluster_token.empty()) start += " --cluster-name " + a.initial_cluster_token;
  Write("Restored snapshot " + a.file + " (revision " + std::to_string(restored->facts.revision) +
        ", " + std::to_string(restored->facts.total_keys) + " keys, " +
        std::to_string(restored->facts.leases) + " leases) into " + data_dir + " for member " +
        a.name + " of a new cluster of " + std::to_string(names.size()) +
        "\nStart it with: " + start + "\n");
  return 0;
}

}  // namespace

void AddSnapshotCommands(CLI::App& app, Context& ctx) {
  auto* snapshot = app.add_subcommand("snapshot", "Manages natcd node snapshots");
  snapshot->require_subcommand(1);

  auto save_path = std::make_shared<std::string>();
  auto* save = snapshot->add_subcommand("save", "Stores a snapshot of a member's database");
  save->add_option("filename", *save_path, "the file to write")->required();
  save->callback([&ctx, save_path] { ctx.rc = Save(ctx, *save_path); });

  auto status_path = std::make_shared<std::string>();
  auto* status = snapshot->add_subcommand(
      "status", "Gets backend snapshot status of a given file (hash, revision, keys, size)");
  status->add_option("filename", *status_path, "the snapshot file")->required();
  status->callback([&ctx, status_path] { ctx.rc = Status(ctx, *status_path); });

  auto a = std::make_shared<RestoreArgs>();
  auto* restore = snapshot->add_subcommand(
      "restore", "Restores a snapshot into the data directory of a member of a new cluster");
  restore->add_option("filename", a->file, "the snapshot file")->required();
  restore->add_option("--data-dir", a->data_dir,
                      "path to the data directory (default: <name>.natcd)");
  restore->add_option("--name", a->name, "human-readable name for this member")
      ->capture_default_str();
  restore->add_option("--initial-cluster", a->initial_cluster,
                      "the new cluster's members: names (natcd's --initial-cluster), or "
                      "name=URL pairs as etcdutl takes them (default: --name alone)");
  restore->add_option("--initial-cluster-token", a->initial_cluster_token,
                      "the new cluster's name, to start its members with as --cluster-name "
                      "(natcd derives the cluster ID from the prefix and it)");
  restore->callback([&ctx, a] { ctx.rc = Restore(*a); });
}

}  // namespace natcdctl
