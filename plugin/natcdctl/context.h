// natcdctl: what every command shares. The options of one run, its printer
// and its connection travel in a Context that main() makes and hands to
// each command group (nothing global); etcdctl's exit codes and error
// wording.
#pragma once

#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "natcd/client.h"
#include "plugin/natcdctl/printer.h"

namespace natcdctl {

// etcdctl's exit codes.
constexpr int kExitError = 1;
constexpr int kExitBadConnection = 2;
constexpr int kExitInvalidInput = 3;
constexpr int kExitBadFeature = 4;
constexpr int kExitBadArgs = 128;

// The global flags (also NATCDCTL_* environment variables).
struct Options {
  std::string nats_url = "nats://127.0.0.1:4222";
  std::string prefix = "natcd";
  // etcdctl's --user and --password: natcd's auth. The password comes from
  // "name:password", --password, or a prompt (password_given false).
  std::string user;
  std::string password;
  bool password_given = false;
  // The NATS login.
  std::string nats_user;
  std::string nats_password;
  std::string token;
  std::string creds;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string command_timeout = "5s";
  std::string write_out = "simple";
  std::string dial_timeout = "2s";
  bool hex = false;
  // Every member from the member list rather than the one reached
  // (endpoint status, health and hashkv; defrag).
  bool cluster = false;
};

// The connection and the client over it, made once per run.
struct Conn {
  natsConnection* nc = nullptr;
  natcdClient* client = nullptr;
  Conn() = default;
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  ~Conn();
};

struct Context {
  Options opts;
  Printer printer;
  // What follows the first "--" after `watch` or `lock`: the command to run.
  std::vector<std::string> exec_args;
  // The exit code of the command that ran.
  int rc = 0;

  // --command-timeout in milliseconds.
  int64_t TimeoutMs() const;
  // Connects (with --user, prompting for the password if none was given,
  // then authenticating); on failure prints the error and returns its exit
  // code (else 0).
  int Open(Conn* c);
  // The server URL the connection reached (else --nats-url).
  std::string Endpoint(const Conn& c) const;
};

// Writes to stdout at once; ends the run as SIGPIPE would once nobody reads.
void Write(const std::string& s);
// "Error: <message>" on stderr; returns `code`.
int Fail(int code, const std::string& message);
// The calling thread's last library error as etcdctl words it (natcd's
// text without its "ErrName: " prefix and natcd's own detail).
std::string LibErrorText(natcdStatus s);
// Fail() with that text and the exit code the status calls for.
int LibFail(natcdStatus s);

// etcdctl's `get "" --prefix` (or --from-key): every key, i.e. key "\0"
// and range end "\0".
std::string AllKeysIfEmpty(const std::string& key, bool* prefix, bool* from_key);
// A lease or member ID in hex (at most 16 digits).
bool ParseHexId(const std::string& text, int64_t* id);
std::string Hex16(int64_t id);   // 16 digits, zero-padded (lease IDs)
std::string HexId(uint64_t id);  // no padding (member and cluster IDs)
std::string ReadAll(FILE* f);

// The signals the commands that run until interrupted (watch, lease
// keep-alive, lock, elect) take with sigwait: SIGINT, SIGTERM, and SIGUSR1
// (a command's own thread ending the run). Children get them back.
sigset_t WaitSignals();
// Runs argv with extra environment, waits, returns its exit status (as the
// shell would).
int RunCommand(const std::vector<std::string>& argv,
               const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace natcdctl
