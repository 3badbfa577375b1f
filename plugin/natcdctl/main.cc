// natcdctl: etcdctl v3 for natcd. The same commands, flags and output
// formats as etcdctl, speaking docs/PROTOCOL.md through the C client library.
//
// Global flags may also be given as NATCDCTL_* environment variables (as
// etcdctl's ETCDCTL_*): NATCDCTL_NATS_URL, NATCDCTL_PREFIX, NATCDCTL_USER,
// NATCDCTL_PASSWORD, NATCDCTL_NATS_USER, NATCDCTL_NATS_PASSWORD,
// NATCDCTL_TOKEN, NATCDCTL_CREDS, NATCDCTL_TLS_CA, NATCDCTL_TLS_CERT,
// NATCDCTL_TLS_KEY, NATCDCTL_COMMAND_TIMEOUT, NATCDCTL_WRITE_OUT,
// NATCDCTL_DIAL_TIMEOUT, NATCDCTL_HEX, NATCDCTL_CLUSTER.
//
// --user and --password are etcdctl's: natcd's auth (a token from
// P.auth.authenticate). The NATS login is --nats-user and --nats-password
// (or user:password@ in the NATS URL), --token and --creds.
//
// main() parses the flags into one Context and hands it to the command
// groups (commands.h), one file each; every request goes through the C
// client library.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "plugin/natcdctl/commands.h"
#include "plugin/natcdctl/context.h"
#include "plugin/natcdctl/format.h"

namespace {
constexpr const char* kVersion = "0.1.0";
}  // namespace

int main(int argc, char** argv) {
  using namespace natcdctl;
  Context ctx;
  Options& opts = ctx.opts;
  signal(SIGPIPE, SIG_IGN);
  // Everything after the first "--" that follows `watch` or `lock` is the
  // command to run (etcdctl's `watch key -- cmd args`).
  std::vector<char*> args;
  {
    bool exec_cmd = false;
    int i = 0;
    for (; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "watch" || a == "lock") exec_cmd = true;
      if (a == "--" && exec_cmd) break;
      args.push_back(argv[i]);
    }
    for (++i; i < argc; ++i) ctx.exec_args.push_back(argv[i]);
  }

  CLI::App app{"natcdctl: a command line client for natcd (etcdctl's commands over NATS)."};
  app.require_subcommand(1);
  app.fallthrough();
  auto global = [&](const char* flag, std::string& value, const char* env, const char* help) {
    return app.add_option(flag, value, help)->envname(env)->capture_default_str();
  };
  global("--nats-url,--endpoints", opts.nats_url, "NATCDCTL_NATS_URL",
         "NATS server URL(s), comma-separated");
  global("--prefix", opts.prefix, "NATCDCTL_PREFIX", "natcd's subject prefix");
  global("--user", opts.user, "NATCDCTL_USER",
         "username[:password] for authentication (prompt if password is not supplied)");
  global("--password", opts.password, "NATCDCTL_PASSWORD",
         "password for authentication (if this option is used, --user option shouldn't include "
         "password)");
  global("--nats-user", opts.nats_user, "NATCDCTL_NATS_USER", "NATS user");
  global("--nats-password", opts.nats_password, "NATCDCTL_NATS_PASSWORD", "NATS password");
  global("--token", opts.token, "NATCDCTL_TOKEN", "NATS token");
  global("--creds", opts.creds, "NATCDCTL_CREDS", "NATS credentials file (JWT + nkey)");
  global("--tls-ca,--cacert", opts.tls_ca, "NATCDCTL_TLS_CA", "CA certificate file for the server");
  global("--tls-cert,--cert", opts.tls_cert, "NATCDCTL_TLS_CERT", "client certificate file");
  global("--tls-key,--key", opts.tls_key, "NATCDCTL_TLS_KEY", "client key file");
  global("--command-timeout", opts.command_timeout, "NATCDCTL_COMMAND_TIMEOUT",
         "timeout for short running command (excluding dial timeout)");
  global("-w,--write-out", opts.write_out, "NATCDCTL_WRITE_OUT",
         "set the output format (simple, json, fields, table)")
      ->check(CLI::IsMember({"simple", "json", "fields", "table"}));
  global("--dial-timeout", opts.dial_timeout, "NATCDCTL_DIAL_TIMEOUT",
         "dial timeout for the NATS connection");
  app.add_flag("--hex", opts.hex, "print byte strings as hex encoded strings")
      ->envname("NATCDCTL_HEX");
  app.add_flag("--cluster", opts.cluster, "use all endpoints from the cluster member list")
      ->envname("NATCDCTL_CLUSTER");

  AddKvCommands(app, ctx);
  AddTxnCommand(app, ctx);
  AddCompactionCommand(app, ctx);
  AddWatchCommand(app, ctx);
  AddLeaseCommands(app, ctx);
  AddEndpointCommands(app, ctx);
  AddMemberCommands(app, ctx);
  AddMoveLeaderCommand(app, ctx);
  AddDefragCommand(app, ctx);
  AddAlarmCommands(app, ctx);
  app.add_subcommand("version", "Prints the version of natcdctl")->callback([&] {
    Write("natcdctl version: " + std::string(kVersion) + "\nAPI version: 3.5\n");
  });

  AddConcurrencyCommands(app, ctx);
  AddSnapshotCommands(app, ctx);

  app.parse_complete_callback([&] {
    ctx.printer.format = opts.write_out == "json"     ? Format::kJson
                         : opts.write_out == "fields" ? Format::kFields
                         : opts.write_out == "table"  ? Format::kTable
                                                      : Format::kSimple;
    ctx.printer.hex = opts.hex;
    if (ParseDurationMs(opts.command_timeout) <= 0) {
      throw CLI::ValidationError("--command-timeout", "bad duration " + opts.command_timeout);
    }
    if (ParseDurationMs(opts.dial_timeout) <= 0) {
      throw CLI::ValidationError("--dial-timeout", "bad duration " + opts.dial_timeout);
    }
    // etcdctl's --user: "name:password" unless --password is given.
    if (size_t colon = opts.user.find(':'); colon != std::string::npos && opts.password.empty()) {
      opts.password = opts.user.substr(colon + 1);
      opts.user = opts.user.substr(0, colon);
      opts.password_given = true;
    } else {
      opts.password_given = !opts.password.empty();
    }
  });

  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  nats_Close();
  return ctx.rc;
}
