// natcdctl lock and elect: a session (a lease kept alive) holding a lock
// or campaigning, until interrupted or the session is lost.
#include <memory>

#include "plugin/natcdctl/commands.h"

namespace natcdctl {
namespace {

void OnSessionLost(natcdSession*, void*) { kill(getpid(), SIGUSR1); }

int Lock(Context& ctx, const std::string& name, const std::vector<std::string>& command,
         int64_t ttl) {
  sigset_t set = WaitSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdSession* session = nullptr;
  natcdStatus s = natcdSession_Create(&session, c.client, ttl, OnSessionLost, nullptr);
  if (s != natcdStatus_OK) return LibFail(s);
  natcdMutex* m = nullptr;
  s = natcdMutex_Create(&m, session, name.c_str());
  if (s == natcdStatus_OK) s = natcdMutex_Lock(m, -1);
  if (s != natcdStatus_OK) {
    int rc = LibFail(s);
    natcdMutex_Destroy(m);
    natcdSession_Destroy(session);
    return rc;
  }
  int64_t rev = 0;
  std::string key = natcdMutex_Key(m, &rev);
  int rc = 0;
  if (!command.empty()) {
    rc = RunCommand(command, {{"ETCD_LOCK_KEY", key}, {"ETCD_LOCK_REV", std::to_string(rev)}});
  } else {
    Write(key + "\n\n");
    int sig = 0;
    sigwait(&set, &sig);
    if (sig == SIGUSR1) rc = Fail(kExitError, "session expired");
  }
  natcdMutex_Unlock(m);
  natcdMutex_Destroy(m);
  natcdSession_Destroy(session);
  return rc;
}

void OnObserve(natcdObserver*, const natcdKeyValue* leader, void* closure) {
  if (leader) Write(static_cast<const Printer*>(closure)->KvSimple(*leader, false));
}

int Elect(Context& ctx, const std::string& name, const std::vector<std::string>& proposal,
          bool listen, int64_t ttl) {
  if (listen == !proposal.empty()) {
    return Fail(kExitBadArgs, listen ? "no proposal argument but -l is set"
                                     : "elect takes a proposal argument without -l");
  }
  sigset_t set = WaitSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  int sig = 0;
  if (listen) {
    natcdElection* e = nullptr;
    natcdObserver* o = nullptr;
    natcdStatus s = natcdElection_Create(&e, c.client, nullptr, name.c_str());
    if (s == natcdStatus_OK) s = natcdElection_Observe(&o, e, OnObserve, &ctx.printer);
    if (s != natcdStatus_OK) {
      natcdElection_Destroy(e);
      return LibFail(s);
    }
    sigwait(&set, &sig);
    natcdObserver_Destroy(o);
    natcdElection_Destroy(e);
    return 0;
  }
  natcdSession* session = nullptr;
  natcdStatus s = natcdSession_Create(&session, c.client, ttl, OnSessionLost, nullptr);
  if (s != natcdStatus_OK) return LibFail(s);
  natcdElection* e = nullptr;
  s = natcdElection_Create(&e, c.client, session, name.c_str());
  if (s == natcdStatus_OK) {
    s = natcdElection_Campaign(e, proposal[0].data(), proposal[0].size(), -1);
  }
  natcdKeyValue* leader = nullptr;
  if (s == natcdStatus_OK) s = natcdElection_Leader(&leader, e);
  if (s != natcdStatus_OK) {
    int rc = LibFail(s);
    natcdElection_Destroy(e);
    natcdSession_Destroy(session);
    return rc;
  }
  Write(ctx.printer.KvSimple(*leader, false));
  natcdKeyValue_Destroy(leader);
  sigwait(&set, &sig);
  int rc = sig == SIGUSR1 ? Fail(kExitError, "elect: session expired") : 0;
  natcdElection_Resign(e);
  natcdElection_Destroy(e);
  natcdSession_Destroy(session);
  return rc;
}

struct LockArgs {
  std::string name;
  std::vector<std::string> command;
  int64_t ttl = 60;
};

struct ElectArgs {
  std::string name;
  std::vector<std::string> proposal;
  bool listen = false;
  int64_t ttl = 60;
};

}  // namespace

void AddConcurrencyCommands(CLI::App& app, Context& ctx) {
  auto lock = std::make_shared<LockArgs>();
  auto* lock_cmd =
      app.add_subcommand("lock", "Acquires a named lock (and runs a command holding it)");
  lock_cmd->add_option("lockname", lock->name, "lock name")->required();
  lock_cmd->add_option("command", lock->command, "command to run while holding the lock");
  lock_cmd->add_option("--ttl", lock->ttl, "timeout for session")->capture_default_str();
  lock_cmd->callback([&ctx, lock] {
    std::vector<std::string> command = lock->command;
    command.insert(command.end(), ctx.exec_args.begin(), ctx.exec_args.end());
    ctx.rc = Lock(ctx, lock->name, command, lock->ttl);
  });

  auto elect = std::make_shared<ElectArgs>();
  auto* elect_cmd = app.add_subcommand("elect", "Observes and participates in leader election");
  elect_cmd->add_option("election-name", elect->name, "election name")->required();
  elect_cmd->add_option("proposal", elect->proposal, "value to campaign with")->expected(0, 1);
  elect_cmd->add_flag("-l,--listen", elect->listen, "observation mode");
  elect_cmd->add_option("--ttl", elect->ttl, "timeout for session")->capture_default_str();
  elect_cmd->callback([&ctx, elect] {
    ctx.rc = Elect(ctx, elect->name, elect->proposal, elect->listen, elect->ttl);
  });
}

}  // namespace natcdctl
