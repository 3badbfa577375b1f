// natcdctl lease grant, revoke, timetolive, list, keep-alive.
#include <chrono>
#include <memory>

#include "plugin/natcdctl/commands.h"

namespace natcdctl {
namespace {

int Grant(Context& ctx, int64_t ttl) {
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  int64_t id = 0;
  int64_t granted = 0;
  natcdStatus s = natcdLease_Grant(&id, &granted, c.client, ttl, 0);
  // etcdctl's words and exit code, whatever the error (ErrNoSpace included).
  if (s != natcdStatus_OK)
    return Fail(kExitError, "failed to grant lease (" + LibErrorText(s) + ")");
  // The grant reply's header is not exposed by the library; a cheap read gives one.
  natcdHeader h{};
  natcdRangeOptions o{};
  o.count_only = true;
  natcdRangeResponse* r = nullptr;
  if (ctx.printer.format != Format::kSimple &&
      natcdKV_Get(&r, c.client, "\0", 1, &o) == natcdStatus_OK) {
    h = r->header;
  }
  natcdRangeResponse_Destroy(r);
  Write(ctx.printer.Grant(h, id, granted));
  return 0;
}

int Revoke(Context& ctx, const std::string& hex) {
  int64_t id = 0;
  if (!ParseHexId(hex, &id))
    return Fail(kExitBadArgs, "bad lease ID arg (" + hex + "), expecting ID in Hex");
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdStatus s = natcdLease_Revoke(c.client, id);
  if (s != natcdStatus_OK) {
    return Fail(kExitError, "failed to revoke lease (" + LibErrorText(s) + ")");
  }
  Write(ctx.printer.Revoke(id));
  return 0;
}

int TimeToLive(Context& ctx, const std::string& hex, bool keys) {
  int64_t id = 0;
  if (!ParseHexId(hex, &id))
    return Fail(kExitBadArgs, "bad lease ID arg (" + hex + "), expecting ID in Hex");
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdLeaseTimeToLive* t = nullptr;
  natcdStatus s = natcdLease_TimeToLive(&t, c.client, id, keys);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(ctx.printer.TimeToLive(*t, keys));
  natcdLeaseTimeToLive_Destroy(t);
  return 0;
}

int List(Context& ctx) {
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  int64_t* ids = nullptr;
  size_t n = 0;
  natcdStatus s = natcdLease_Leases(&ids, &n, c.client);
  if (s != natcdStatus_OK) return LibFail(s);
  std::vector<int64_t> list(ids, ids + n);
  free(ids);
  Write(ctx.printer.Leases(list));
  return 0;
}

int KeepAlive(Context& ctx, const std::string& hex, bool once) {
  int64_t id = 0;
  if (!ParseHexId(hex, &id))
    return Fail(kExitBadArgs, "bad lease ID arg (" + hex + "), expecting ID in Hex");
  sigset_t set = WaitSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  // After a failed renewal (natcd or NATS unreachable) retry every 500 ms
  // until a whole TTL has passed since the last renewal: then the lease may
  // have expired, and etcdctl's message ends the run.
  int64_t ttl = 0;
  auto last_ok = std::chrono::steady_clock::now();
  bool failing = false;
  for (;;) {
    int64_t renewed = 0;
    natcdStatus s = natcdLease_KeepAliveOnce(&renewed, c.client, id);
    int64_t wait_ms = 500;
    if (s == natcdStatus_NotFound) {
      if (once) return Fail(kExitError, "etcdserver: requested lease not found");
      Write("lease " + Hex16(id) + " expired or revoked.\n");
      return 0;
    } else if (s == natcdStatus_OK) {
      ttl = renewed;
      last_ok = std::chrono::steady_clock::now();
      failing = false;
      Write(ctx.printer.KeepAlive(id, ttl));
      if (once) return 0;
      wait_ms = std::max<int64_t>(ttl * 1000 / 3, 500);
    } else if (once || ttl == 0) {
      return LibFail(s);
    } else {
      if (!failing) {
        natcdError e{};
        natcd_GetLastError(&e);
        fprintf(stderr, "lease %s keepalive failed (%s); retrying\n", Hex16(id).c_str(),
                e.text[0] ? e.text : natcdStatus_GetText(s));
        failing = true;
      }
      if (std::chrono::steady_clock::now() - last_ok > std::chrono::seconds(ttl)) {
        Write("lease " + Hex16(id) + " expired or revoked.\n");
        return kExitError;
      }
    }
    timespec ts{static_cast<time_t>(wait_ms / 1000), static_cast<long>(wait_ms % 1000) * 1000000};
    int sig = sigtimedwait(&set, nullptr, &ts);
    if (sig == SIGINT || sig == SIGTERM) return 0;
  }
}

struct LeaseArgs {
  int64_t ttl = 0;
  std::string id;
  bool keys = false;
  bool once = false;
};

}  // namespace

void AddLeaseCommands(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<LeaseArgs>();
  auto* lease_cmd = app.add_subcommand("lease", "Lease related commands");
  lease_cmd->require_subcommand(1);
  auto* grant = lease_cmd->add_subcommand("grant", "Creates leases");
  grant->add_option("ttl", a->ttl, "TTL in seconds")->required();
  grant->callback([&ctx, a] { ctx.rc = Grant(ctx, a->ttl); });
  auto* revoke = lease_cmd->add_subcommand("revoke", "Revokes leases");
  revoke->add_option("leaseID", a->id, "lease ID in hexadecimal")->required();
  revoke->callback([&ctx, a] { ctx.rc = Revoke(ctx, a->id); });
  auto* ttl_cmd = lease_cmd->add_subcommand("timetolive", "Get lease information");
  ttl_cmd->add_option("leaseID", a->id, "lease ID in hexadecimal")->required();
  ttl_cmd->add_flag("--keys", a->keys, "Get keys attached to this lease");
  ttl_cmd->callback([&ctx, a] { ctx.rc = TimeToLive(ctx, a->id, a->keys); });
  auto* list = lease_cmd->add_subcommand("list", "List all active leases");
  list->callback([&ctx] { ctx.rc = List(ctx); });
  auto* keep = lease_cmd->add_subcommand("keep-alive", "Keeps leases alive (renew)");
  keep->add_option("leaseID", a->id, "lease ID in hexadecimal")->required();
  keep->add_flag("--once", a->once,
                 "Resets the keep-alive time to its original value and exits immediately");
  keep->callback([&ctx, a] { ctx.rc = KeepAlive(ctx, a->id, a->once); });
}

}  // namespace natcdctl
