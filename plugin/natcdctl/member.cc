// natcdctl member list, add, remove, promote, update.
#include <memory>
#include <string>
#include <vector>

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

struct ChangeArgs {
  std::string arg;
  bool learner = false;
  std::string peer_urls;  // update: comma-separated, as etcdctl's --peer-urls
};

// The pieces of a comma-separated list, empty ones included (etcdctl's
// strings.Split).
std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1) {
    out.push_back(s.substr(start, comma - start));
  }
  out.push_back(s.substr(start));
  return out;
}

// member add / remove / promote / update: the change is committed when the
// reply comes; etcdctl's wording.
int Change(Context& ctx, const std::string& verb, const ChangeArgs& a) {
  const std::string& arg = a.arg;
  int64_t id = 0;
  if (verb != "add" && !ParseHexId(arg, &id)) {
    return Fail(kExitBadArgs, "bad member ID arg (" + arg + "), expecting ID in Hex");
  }
  if (verb == "update" && a.peer_urls.empty()) {
    return Fail(kExitBadArgs, "member peer urls not provided");
  }
  const std::vector<std::string> urls = SplitCommas(a.peer_urls);
  std::vector<const char*> url_ptrs;
  for (const std::string& url : urls) url_ptrs.push_back(url.c_str());
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdMemberResponse* r = nullptr;
  const auto member = static_cast<uint64_t>(id);
  natcdStatus s;
  if (verb == "add") {
    s = natcdMember_Add(&r, c.client, arg.c_str(), a.learner);
  } else if (verb == "remove") {
    s = natcdMember_Remove(&r, c.client, member);
  } else if (verb == "promote") {
    s = natcdMember_Promote(&r, c.client, member);
  } else {
    s = natcdMember_Update(&r, c.client, member, url_ptrs.data(), url_ptrs.size());
  }
  if (s != natcdStatus_OK) return LibFail(s);
  const std::string cluster = HexId(r->header.cluster_id);
  if (verb == "add") {
    Write("Member " + HexId(r->added ? r->added->id : 0) + " added to cluster " + cluster + "\n\n" +
          "NATCD_NAME=\"" + arg + "\"\nNATCD_INITIAL_CLUSTER_STATE=\"existing\"\n");
  } else {
    const char* done = verb == "remove"    ? " removed from"
                       : verb == "promote" ? " promoted in"
                                           : " updated in";
    Write("Member " + HexId(member) + done + " cluster " + cluster + "\n");
  }
  natcdMemberResponse_Destroy(r);
  return 0;
}

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
  member_add->callback([&ctx, a] { ctx.rc = Change(ctx, "add", *a); });
  auto* member_remove = member_cmd->add_subcommand("remove", "Removes a member from the cluster");
  member_remove->add_option("memberID", a->arg, "the member's ID in hex")->required();
  member_remove->callback([&ctx, a] { ctx.rc = Change(ctx, "remove", *a); });
  auto* member_promote =
      member_cmd->add_subcommand("promote", "Promotes a non-voting member in the cluster");
  member_promote->add_option("memberID", a->arg, "the member's ID in hex")->required();
  member_promote->callback([&ctx, a] { ctx.rc = Change(ctx, "promote", *a); });
  auto* member_update =
      member_cmd->add_subcommand("update", "Updates a member in the cluster (its peer URLs)");
  member_update->add_option("memberID", a->arg, "the member's ID in hex")->required();
  member_update->add_option("--peer-urls", a->peer_urls,
                            "comma separated peer URLs for the updated member.");
  member_update->callback([&ctx, a] { ctx.rc = Change(ctx, "update", *a); });
}

}  // namespace natcdctl
