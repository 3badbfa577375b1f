// natcdctl endpoint status, health and hashkv, of the member the
// connection reaches or, with --cluster, of every member in the member
// list. Members are reached over NATS only: each answers its status and
// hash on P.to.<member ID>.maint.{status,hashkv} (docs/PROTOCOL.md), and
// the endpoint column names the member (it has no URL of its own).
#include <chrono>
#include <memory>

#include "plugin/natcdctl/commands.h"
#include "plugin/natcdctl/format.h"
#include "plugin/natcdctl/targets.h"

namespace natcdctl {
namespace {

struct EndpointStatus {
  std::string endpoint;
  natcdStatusResponse* status;
};

std::string Errors(const natcdStatusResponse& r) {
  std::string out;
  for (size_t i = 0; i < r.n_errors; ++i) out += (i ? ", " : "") + std::string(r.errors[i]);
  return out;
}

std::string StatusOutput(const Printer& printer, const std::vector<EndpointStatus>& list) {
  std::string out;
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string& endpoint = list[i].endpoint;
    const natcdStatusResponse& r = *list[i].status;
    const natcdHeader& h = r.header;
    const std::string errors = Errors(r);
    std::vector<std::string> row = {endpoint,
                                    HexId(h.member_id),
                                    r.version,
                                    HumanBytes(static_cast<uint64_t>(r.db_size)),
                                    r.leader == h.member_id ? "true" : "false",
                                    r.is_learner ? "true" : "false",
                                    std::to_string(r.raft_term),
                                    std::to_string(r.raft_index),
                                    std::to_string(r.raft_applied_index),
                                    errors};
    switch (printer.format) {
      case Format::kJson:
        out +=
            std::string(i ? "," : "[") + "{\"Endpoint\":" + JsonString(endpoint) +
            ",\"Status\":{\"header\":" + HeaderJson(h) + ",\"version\":" + JsonString(r.version) +
            ",\"dbSize\":" + std::to_string(r.db_size) + ",\"leader\":" + std::to_string(r.leader) +
            ",\"raftIndex\":" + std::to_string(r.raft_index) +
            ",\"raftTerm\":" + std::to_string(r.raft_term) +
            ",\"raftAppliedIndex\":" + std::to_string(r.raft_applied_index) +
            ",\"dbSizeInUse\":" + std::to_string(r.db_size_in_use) + "}}";
        break;
      case Format::kFields:
        out += HeaderFields(h) + "\"Version\" : " + GoQuote(r.version) +
               "\n\"DBSize\" : " + std::to_string(r.db_size) +
               "\n\"Leader\" : " + std::to_string(r.leader) +
               "\n\"IsLearner\" : " + (r.is_learner ? "true" : "false") +
               "\n\"RaftIndex\" : " + std::to_string(r.raft_index) +
               "\n\"RaftTerm\" : " + std::to_string(r.raft_term) +
               "\n\"RaftAppliedIndex\" : " + std::to_string(r.raft_applied_index) +
               "\n\"Errors\" : [" + errors + "]\n\"Endpoint\" : " + GoQuote(endpoint) + "\n\n";
        break;
      case Format::kTable:
        break;
      default:
        for (size_t k = 0; k < row.size(); ++k) out += (k ? ", " : "") + row[k];
        out += "\n";
    }
    rows.push_back(std::move(row));
  }
  if (printer.format == Format::kJson) out += (list.empty() ? "[]\n" : "]\n");
  if (printer.format == Format::kTable) {
    out = Table({"endpoint", "ID", "version", "db size", "is leader", "is learner", "raft term",
                 "raft index", "raft applied index", "errors"},
                rows);
  }
  return out;
}

// etcdctl: an endpoint that does not answer is reported on stderr, the
// others printed, and the run fails.
int Status(Context& ctx) {
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  std::vector<Target> targets;
  if (int rc = Targets(ctx, c, &targets)) return rc;
  std::vector<EndpointStatus> list;
  bool failed = false;
  for (const Target& t : targets) {
    natcdStatusResponse* r = nullptr;
    natcdStatus s =
        t.id == 0 ? natcdMaint_Status(&r, c.client) : natcdMaint_MemberStatus(&r, c.client, t.id);
    if (s != natcdStatus_OK) {
      if (!ctx.opts.cluster) return LibFail(s);
      fprintf(stderr, "Failed to get the status of endpoint %s (%s)\n", t.endpoint.c_str(),
              LibErrorText(s).c_str());
      failed = true;
      continue;
    }
    list.push_back({t.endpoint, r});
  }
  Write(StatusOutput(ctx.printer, list));
  for (auto& e : list) natcdStatusResponse_Destroy(e.status);
  return failed ? kExitError : 0;
}

struct Health {
  std::string endpoint;
  bool health = false;
  std::string took;
  std::string error;
};

// One endpoint's health. Without --cluster, etcdctl's probe: a
// linearizable read of the key "health" (it goes through the leader). A
// member of the list: it answers its status and knows a leader, with no
// errors (alarms).
Health Probe(const Conn& c, const Target& t) {
  Health h;
  h.endpoint = t.endpoint;
  auto start = std::chrono::steady_clock::now();
  natcdStatus s;
  natcdStatusResponse* r = nullptr;
  if (t.id == 0) {
    natcdRangeResponse* got = nullptr;
    s = natcdKV_Get(&got, c.client, NATCD_STR("health"), nullptr);
    natcdRangeResponse_Destroy(got);
  } else {
    s = natcdMaint_MemberStatus(&r, c.client, t.id);
  }
  h.took = GoDuration(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
  if (s != natcdStatus_OK) {
    h.error = LibErrorText(s);
  } else if (r != nullptr && r->leader == 0) {
    h.error = "etcdserver: no leader";
  } else if (r != nullptr && r->n_errors > 0) {
    h.error = Errors(*r);
  } else {
    h.health = true;
  }
  natcdStatusResponse_Destroy(r);
  return h;
}

std::string HealthOutput(const Printer& printer, const std::vector<Health>& list) {
  std::string out;
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < list.size(); ++i) {
    const Health& h = list[i];
    const std::string health = h.health ? "true" : "false";
    switch (printer.format) {
      case Format::kJson:
        out += std::string(i ? "," : "[") + "{\"endpoint\":" + JsonString(h.endpoint) +
               ",\"health\":" + health + ",\"took\":" + JsonString(h.took) +
               (h.error.empty() ? "" : ",\"error\":" + JsonString(h.error)) + "}";
        break;
      case Format::kFields:
        out += "\"Endpoint\" : " + GoQuote(h.endpoint) + "\n\"Health\" : " + health +
               "\n\"Took\" : " + h.took + "\n\"Error\" : " + h.error + "\n\n";
        break;
      case Format::kTable:
        rows.push_back({h.endpoint, health, h.took, h.error});
        break;
      default:
        if (h.error.empty()) {
          out +=
              h.endpoint + " is healthy: successfully committed proposal: took = " + h.took + "\n";
        }
    }
  }
  if (printer.format == Format::kJson) out += list.empty() ? "[]\n" : "]\n";
  if (printer.format == Format::kTable) out = Table({"endpoint", "health", "took", "error"}, rows);
  return out;
}

int HealthCheck(Context& ctx) {
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  std::vector<Target> targets;
  if (int rc = Targets(ctx, c, &targets)) return rc;
  std::vector<Health> list;
  bool unhealthy = false;
  for (const Target& t : targets) {
    list.push_back(Probe(c, t));
    unhealthy = unhealthy || !list.back().error.empty();
  }
  Write(HealthOutput(ctx.printer, list));
  if (ctx.printer.format == Format::kSimple) {
    for (const Health& h : list) {
      if (!h.error.empty()) {
        fprintf(stderr, "%s is unhealthy: failed to commit proposal: %s\n", h.endpoint.c_str(),
                h.error.c_str());
      }
    }
  }
  return unhealthy ? Fail(kExitError, "unhealthy cluster") : 0;
}

struct EndpointHash {
  std::string endpoint;
  natcdHashKVResponse hash;
};

// etcdctl 3.4's output: "<endpoint>, <hash>" per member (simple), the
// table of the two, or the response as JSON or fields.
std::string HashKVOutput(const Printer& printer, const std::vector<EndpointHash>& list) {
  std::string out;
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < list.size(); ++i) {
    const EndpointHash& e = list[i];
    const std::string hash = std::to_string(e.hash.hash);
    switch (printer.format) {
      case Format::kJson:
        out += std::string(i ? "," : "[") + "{\"Endpoint\":" + JsonString(e.endpoint) +
               ",\"HashKV\":{\"header\":" + HeaderJson(e.hash.header) + ",\"hash\":" + hash +
               ",\"compact_revision\":" + std::to_string(e.hash.compact_revision) +
               ",\"hash_revision\":" + std::to_string(e.hash.hash_revision) + "}}";
        break;
      case Format::kFields:
        out += HeaderFields(e.hash.header) + "\"Endpoint\" : " + GoQuote(e.endpoint) +
               "\n\"Hash\" : " + hash + "\n\n";
        break;
      case Format::kTable:
        rows.push_back({e.endpoint, hash});
        break;
      default:
        out += e.endpoint + ", " + hash + "\n";
    }
  }
  if (printer.format == Format::kJson) out += list.empty() ? "[]\n" : "]\n";
  if (printer.format == Format::kTable) out = Table({"endpoint", "hash"}, rows);
  return out;
}

// etcdctl: a member that does not answer is reported on stderr, the others
// printed, and the run fails.
int HashKV(Context& ctx, int64_t rev) {
  if (rev < 0) return Fail(kExitBadArgs, "bad revision " + std::to_string(rev));
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  std::vector<Target> targets;
  if (int rc = Targets(ctx, c, &targets)) return rc;
  std::vector<EndpointHash> list;
  std::string failed;  // the last error, for etcdctl's closing "Error: ..."
  for (const Target& t : targets) {
    natcdHashKVResponse r;
    natcdStatus s = t.id == 0 ? natcdMaint_HashKV(&r, c.client, rev)
                              : natcdMaint_MemberHashKV(&r, c.client, t.id, rev);
    if (s != natcdStatus_OK) {
      failed = LibErrorText(s);
      fprintf(stderr, "Failed to get the hash of endpoint %s (%s)\n", t.endpoint.c_str(),
              failed.c_str());
      continue;
    }
    list.push_back({t.endpoint, r});
  }
  Write(HashKVOutput(ctx.printer, list));
  return failed.empty() ? 0 : Fail(kExitError, failed);
}

}  // namespace

void AddEndpointCommands(CLI::App& app, Context& ctx) {
  auto* endpoint_cmd = app.add_subcommand("endpoint", "Endpoint related commands");
  endpoint_cmd->require_subcommand(1);
  endpoint_cmd
      ->add_subcommand("health",
                       "Checks the healthiness of endpoints specified in `--endpoints` flag")
      ->callback([&ctx] { ctx.rc = HealthCheck(ctx); });
  endpoint_cmd->add_subcommand("status", "Prints out the status of the endpoint")->callback([&ctx] {
    ctx.rc = Status(ctx);
  });
  auto rev = std::make_shared<int64_t>(0);
  auto* hashkv = endpoint_cmd->add_subcommand(
      "hashkv", "Prints the KV history hash for each endpoint in --endpoints");
  hashkv->add_option("--rev", *rev, "maximum revision to hash (default: all revisions)");
  hashkv->callback([&ctx, rev] { ctx.rc = HashKV(ctx, *rev); });
}

}  // namespace natcdctl
