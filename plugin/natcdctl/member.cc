// natcdctl member list, add, remove, promote.
#include <memory>

#include "plugin/natcdctl/commands.h"
#include "plugin/natcdctl/format.h"

namespace natcdctl {
namespace {

std::string Join(const char* const* items, size_t n, const char* sep) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? sep : "") + std::string(items[i]);
  return out;
}

std::string JsonStrings(const char* const* items, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? "," : "") + JsonString(items[i]);
  return out;
}

std::string MemberListOutput(const Printer& printer, const natcdMemberResponse& r) {
  std::vector<std::vector<std::string>> rows;
  std::string out;
  if (printer.format == Format::kFields) out = HeaderFields(r.header);
  std::string members;
  for (size_t i = 0; i < r.n_members; ++i) {
    const natcdMember& m = r.members[i];
    rows.push_back({HexId(m.id), "started", m.name, Join(m.peer_urls, m.n_peer_urls, ","),
                    Join(m.client_urls, m.n_client_urls, ","), m.is_learner ? "true" : "false"});
    if (printer.format == Format::kFields) {
      out += "\"ID\" : " + std::to_string(m.id) + "\n\"Name\" : " + GoQuote(m.name) + "\n";
      for (size_t k = 0; k < m.n_peer_urls; ++k)
        out += "\"PeerURL\" : " + GoQuote(m.peer_urls[k]) + "\n";
      for (size_t k = 0; k < m.n_client_urls; ++k)
        out += "\"ClientURL\" : " + GoQuote(m.client_urls[k]) + "\n";
      out += std::string("\"IsLearner\" : ") + (m.is_learner ? "true" : "false") + "\n\n";
    }
    members += (i ? "," : "") + std::string("{\"ID\":") + std::to_string(m.id) +
               ",\"name\":" + JsonString(m.name) + ",\"peerURLs\":[" +
               JsonStrings(m.peer_urls, m.n_peer_urls) + "],\"clientURLs\":[" +
               JsonStrings(m.client_urls, m.n_client_urls) + "]" +
               (m.is_learner ? ",\"isLearner\":true" : "") + "}";
  }
  switch (printer.format) {
    case Format::kJson:
      return "{\"header\":" + HeaderJson(r.header) + ",\"members\":[" + members + "]}\n";
    case Format::kFields:
      return out;
    case Format::kTable:
      return Table({"ID", "status", "name", "peer addrs", "client addrs", "is learner"}, rows);
    default:
      for (const auto& row : rows) {
        for (size_t i = 0; i < row.size(); ++i) out += (i ? ", " : "") + row[i];
        out += "\n";
      }
      return out;
  }
}

int List(Context& ctx) {
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdMemberResponse* r = nullptr;
  natcdStatus s = natcdMember_List(&r, c.client);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(MemberListOutput(ctx.printer, *r));
  natcdMemberResponse_Destroy(r);
  return 0;
}

// member add / remove / promote: the change is committed when the reply
// comes; etcdctl's wording.
int Change(Context& ctx, const std::string& verb, const std::string& arg, bool learner) {
  int64_t id = 0;
  if (verb != "add" && !ParseHexId(arg, &id)) {
    return Fail(kExitBadArgs, "bad member ID arg (" + arg + "), expecting ID in Hex");
  }
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdMemberResponse* r = nullptr;
  natcdStatus s = verb == "add"      ? natcdMember_Add(&r, c.client, arg.c_str(), learner)
                  : verb == "remove" ? natcdMember_Remove(&r, c.client, static_cast<uint64_t>(id))
                                     : natcdMember_Promote(&r, c.client, static_cast<uint64_t>(id));
  if (s != natcdStatus_OK) return LibFail(s);
  const std::string cluster = HexId(r->header.cluster_id);
  if (verb == "add") {
    Write("Member " + HexId(r->added ? r->added->id : 0) + " added to cluster " + cluster + "\n\n" +
          "NATCD_NAME=\"" + arg + "\"\nNATCD_INITIAL_CLUSTER_STATE=\"existing\"\n");
  } else {
    Write("Member " + HexId(static_cast<uint64_t>(id)) +
          (verb == "remove" ? " removed from" : " promoted in") + " cluster " + cluster + "\n");
  }
  natcdMemberResponse_Destroy(r);
  return 0;
}

struct ChangeArgs {
  std::string arg;
  bool learner = false;
};

}  // namespace

void AddMemberCommands(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<ChangeArgs>();
  auto* member_cmd = app.add_subcommand("member", "Membership related commands");
  member_cmd->require_subcommand(1);
  member_cmd->add_subcommand("list", "Lists all members in the cluster")->callback([&ctx] {
    ctx.rc = List(ctx);
  });
  auto* member_add = member_cmd->add_subcommand(
      "add",
      "Adds a member into the cluster (start it with that --name, not in --initial-cluster)");
  member_add->add_option("name", a->arg, "the new member's name")->required();
  member_add->add_flag("--learner", a->learner, "indicates if the new member is raft learner");
  member_add->callback([&ctx, a] { ctx.rc = Change(ctx, "add", a->arg, a->learner); });
  auto* member_remove = member_cmd->add_subcommand("remove", "Removes a member from the cluster");
  member_remove->add_option("memberID", a->arg, "the member's ID in hex")->required();
  member_remove->callback([&ctx, a] { ctx.rc = Change(ctx, "remove", a->arg, false); });
  auto* member_promote =
      member_cmd->add_subcommand("promote", "Promotes a non-voting member in the cluster");
  member_promote->add_option("memberID", a->arg, "the member's ID in hex")->required();
  member_promote->callback([&ctx, a] { ctx.rc = Change(ctx, "promote", a->arg, false); });
}

}  // namespace natcdctl
