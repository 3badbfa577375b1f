// natcdctl compaction, defrag and move-leader.
#include <memory>

#include "plugin/natcdctl/commands.h"
#include "plugin/natcdctl/targets.h"

namespace natcdctl {
namespace {

int Compaction(Context& ctx, const std::string& rev_text, bool physical) {
  char* end = nullptr;
  long long rev = strtoll(rev_text.c_str(), &end, 10);
  if (rev_text.empty() || *end != '\0') return Fail(kExitBadArgs, "bad revision " + rev_text);
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdHeader h{};
  natcdStatus s = natcdKV_Compact(&h, c.client, rev, physical);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(ctx.printer.Compaction(h, rev));
  return 0;
}

// etcdctl move-leader: the leader (whichever member the request reaches
// forwards it) hands over to the target and answers once it leads.
int MoveLeader(Context& ctx, const std::string& arg) {
  int64_t target = 0;
  if (!ParseHexId(arg, &target)) {
    return Fail(kExitBadArgs, "bad member ID arg (" + arg + "), expecting ID in Hex");
  }
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdStatusResponse* status = nullptr;
  natcdStatus s = natcdMaint_Status(&status, c.client);
  if (s != natcdStatus_OK) return LibFail(s);
  const uint64_t from = status->leader;
  natcdStatusResponse_Destroy(status);
  s = natcdMaint_MoveLeader(nullptr, c.client, static_cast<uint64_t>(target));
  if (s != natcdStatus_OK) return LibFail(s);
  Write("Leadership transferred from " + HexId(from) + " to " +
        HexId(static_cast<uint64_t>(target)) + "\n");
  return 0;
}

// etcdctl defrag: each member in turn (one, or every member with
// --cluster) rewrites its database; a failure is reported and the others
// still go on; the run fails if any did.
int Defrag(Context& ctx) {
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  std::vector<Target> targets;
  if (int rc = Targets(ctx, c, &targets)) return rc;
  bool failed = false;
  for (const Target& t : targets) {
    natcdStatus s = t.id == 0 ? natcdMaint_Defragment(nullptr, c.client)
                              : natcdMaint_MemberDefragment(nullptr, c.client, t.id);
    if (s != natcdStatus_OK) {
      fprintf(stderr, "Failed to defragment etcd member[%s] (%s)\n", t.endpoint.c_str(),
              LibErrorText(s).c_str());
      failed = true;
      continue;
    }
    Write("Finished defragmenting etcd member[" + t.endpoint + "]\n");
  }
  return failed ? kExitError : 0;
}

struct CompactionArgs {
  std::string rev;
  bool physical = false;
};

}  // namespace

void AddCompactionCommand(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<CompactionArgs>();
  auto* compact_cmd = app.add_subcommand("compaction", "Compacts the event history in natcd");
  compact_cmd->add_option("revision", a->rev, "revision")->required();
  compact_cmd->add_flag("--physical", a->physical, "wait for the compaction to be on disk");
  compact_cmd->callback([&ctx, a] { ctx.rc = Compaction(ctx, a->rev, a->physical); });
}

void AddMoveLeaderCommand(CLI::App& app, Context& ctx) {
  auto transferee = std::make_shared<std::string>();
  auto* move_leader = app.add_subcommand("move-leader", "Transfers leadership to another member");
  move_leader->add_option("transferee-member-id", *transferee, "the member's ID in hex")
      ->required();
  move_leader->callback([&ctx, transferee] { ctx.rc = MoveLeader(ctx, *transferee); });
}

void AddDefragCommand(CLI::App& app, Context& ctx) {
  app.add_subcommand("defrag", "Defragments the storage of the natcd members")->callback([&ctx] {
    ctx.rc = Defrag(ctx);
  });
}

}  // namespace natcdctl
