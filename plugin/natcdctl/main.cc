// natcdctl: etcdctl v3 for natcd. The same commands, flags and output
// formats as etcdctl, speaking docs/PROTOCOL.md through the C client library.
//
// Global flags may also be given as NATCDCTL_* environment variables (as
// etcdctl's ETCDCTL_*): NATCDCTL_NATS_URL, NATCDCTL_PREFIX, NATCDCTL_USER,
// NATCDCTL_PASSWORD, NATCDCTL_TOKEN, NATCDCTL_CREDS, NATCDCTL_TLS_CA,
// NATCDCTL_TLS_CERT, NATCDCTL_TLS_KEY, NATCDCTL_COMMAND_TIMEOUT,
// NATCDCTL_WRITE_OUT.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "adapters/nats/natcd.pb-c.h"
#include "natcd/client.h"
#include "plugin/common/nats_auth.h"
#include "plugin/natcdctl/format.h"
#include "plugin/natcdctl/printer.h"

namespace natcdctl {
namespace {

constexpr int kExitError = 1;
constexpr int kExitBadConnection = 2;
constexpr int kExitBadArgs = 128;
constexpr const char* kVersion = "0.1.0";

struct Globals {
  std::string nats_url = "nats://127.0.0.1:4222";
  std::string prefix = "natcd";
  std::string user;
  std::string password;
  std::string token;
  std::string creds;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string command_timeout = "5s";
  std::string write_out = "simple";
  std::string dial_timeout = "2s";
  bool hex = false;
};

Globals g;
Printer printer;

void Write(const std::string& s) {
  fwrite(s.data(), 1, s.size(), stdout);
  // Nobody reads any more (`natcdctl watch k | head -1`): end as SIGPIPE would.
  if (fflush(stdout) != 0 && errno == EPIPE) _exit(128 + SIGPIPE);
}

int Fail(int code, const std::string& message) {
  fflush(stdout);
  fprintf(stderr, "Error: %s\n", message.c_str());
  return code;
}

// The last library error as etcdctl would word it: natcd's error text
// without its "ErrName: " prefix.
int LibFail(natcdStatus s) {
  natcdError e{};
  natcd_GetLastError(&e);
  std::string text = e.status == s && e.text[0] ? e.text : natcdStatus_GetText(s);
  if (size_t colon = text.find(": "); colon != std::string::npos && text.rfind("Err", 0) == 0) {
    text = text.substr(colon + 2);
  }
  // etcd's own words, without natcd's detail (" (lease 1234)").
  if (size_t detail = text.find(" (lease "); detail != std::string::npos) text.resize(detail);
  return Fail(
      s == natcdStatus_NoResponders || s == natcdStatus_ConnectionError || s == natcdStatus_Timeout
          ? kExitBadConnection
          : kExitError,
      text);
}

int64_t TimeoutMs() {
  int64_t ms = ParseDurationMs(g.command_timeout);
  return ms > 0 ? ms : 5000;
}

// The connection and the client over it, made once per run.
struct Conn {
  natsConnection* nc = nullptr;
  natcdClient* client = nullptr;
  ~Conn() {
    natcdClient_Destroy(client);
    natsConnection_Destroy(nc);
  }
};

natsStatus Dial(natsConnection** nc) {
  natsOptions* opts = nullptr;
  natsStatus st = natsOptions_Create(&opts);
  // Several URLs (comma-separated, as etcdctl's --endpoints) form nats.c's pool.
  std::vector<std::string> urls;
  for (size_t start = 0; start <= g.nats_url.size();) {
    size_t comma = std::min(g.nats_url.find(',', start), g.nats_url.size());
    if (comma > start) urls.push_back(g.nats_url.substr(start, comma - start));
    start = comma + 1;
  }
  std::vector<const char*> servers;
  for (const auto& u : urls) servers.push_back(u.c_str());
  if (st == NATS_OK) {
    st = natsOptions_SetServers(opts, servers.data(), static_cast<int>(servers.size()));
  }
  if (st == NATS_OK) st = natsOptions_SetNoRandomize(opts, true);
  if (st == NATS_OK) st = natsOptions_SetName(opts, "natcdctl");
  if (st == NATS_OK)
    st = natsOptions_SetTimeout(opts, std::max<int64_t>(ParseDurationMs(g.dial_timeout), 1));
  if (st == NATS_OK) st = natsOptions_SetMaxReconnect(opts, -1);
  if (st == NATS_OK) st = natsOptions_SetReconnectWait(opts, 250);
  if (st == NATS_OK) {
    st = natcd::ApplyNatsAuth(
        opts, {g.user, g.password, g.token, g.creds, g.tls_ca, g.tls_cert, g.tls_key});
  }
  if (st == NATS_OK) st = natsConnection_Connect(nc, opts);
  natsOptions_Destroy(opts);
  return st;
}

// Connects; on failure prints the error and returns its exit code (else 0).
int Open(Conn* c) {
  natsStatus st = Dial(&c->nc);
  if (st != NATS_OK) {
    return Fail(kExitBadConnection,
                "cannot connect to " + g.nats_url + ": " + natsStatus_GetText(st));
  }
  natcdClientOptions opts;
  natcdClientOptions_Init(&opts);
  opts.prefix = g.prefix.c_str();
  opts.retries = 1;
  opts.timeout_ms = std::max<int64_t>(TimeoutMs() / 2, 1);
  natcdStatus s = natcdClient_Create(&c->client, c->nc, &opts);
  return s == natcdStatus_OK ? 0 : LibFail(s);
}

// etcdctl's `get "" --prefix` (or --from-key): every key, i.e. key "\0"
// and range end "\0".
std::string AllKeysIfEmpty(const std::string& key, bool* prefix, bool* from_key) {
  if (!key.empty() || !(*prefix || *from_key)) return key;
  *prefix = false;
  *from_key = true;
  return std::string(1, '\0');
}

bool ParseLeaseId(const std::string& text, int64_t* id) {
  if (text.empty() || text.size() > 16) return false;
  char* end = nullptr;
  uint64_t v = strtoull(text.c_str(), &end, 16);
  if (*end != '\0') return false;
  *id = static_cast<int64_t>(v);
  return true;
}

std::string Hex16(int64_t id) {
  char buf[32];
  snprintf(buf, sizeof buf, "%016" PRIx64, static_cast<uint64_t>(id));
  return buf;
}

std::string ReadAll(FILE* f) {
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return out;
}

// Signals are taken with sigwait by the commands that run until
// interrupted (watch, lease keep-alive, lock, elect); children get them back.
sigset_t WaitSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);  // a command's own thread ending the run
  return set;
}

// Runs argv with extra environment, waits, returns its exit status (as the
// shell would).
int RunCommand(const std::vector<std::string>& argv,
               const std::vector<std::pair<std::string, std::string>>& env) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    sigset_t set = WaitSignals();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    fprintf(stderr, "Error: cannot run %s: %s\n", argv[0].c_str(), strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ---------------------------------------------------------------------------
// KV
// ---------------------------------------------------------------------------

struct PutArgs {
  std::string key;
  std::vector<std::string> value;  // at most one
  std::string lease = "0";
  bool prev_kv = false;
  bool ignore_value = false;
  bool ignore_lease = false;
};

int CmdPut(const PutArgs& a) {
  if (a.value.size() > 1)
    return Fail(kExitBadArgs, "put command needs 1 argument and input from stdin or 2 arguments");
  std::string value;
  if (!a.value.empty()) {
    value = a.value[0];
  } else if (!a.ignore_value) {
    value = ReadAll(stdin);
  }
  natcdPutOptions opts{};
  if (!ParseLeaseId(a.lease, &opts.lease))
    return Fail(kExitBadArgs, "bad lease ID (" + a.lease + "), expecting ID in Hex");
  opts.prev_kv = a.prev_kv;
  opts.ignore_value = a.ignore_value;
  opts.ignore_lease = a.ignore_lease;
  Conn c;
  if (int rc = Open(&c)) return rc;
  natcdPutResponse* resp = nullptr;
  natcdStatus s =
      natcdKV_Put(&resp, c.client, a.key.data(), a.key.size(), value.data(), value.size(), &opts);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(printer.Put(*resp));
  natcdPutResponse_Destroy(resp);
  return 0;
}

struct GetArgs {
  std::vector<std::string> keys;  // key [range_end]
  bool prefix = false;
  bool from_key = false;
  int64_t rev = 0;
  int64_t limit = 0;
  std::string sort_by;
  std::string order;
  bool keys_only = false;
  bool count_only = false;
  bool value_only = false;
  std::string consistency = "l";
};

int SetRangeOptions(const GetArgs& a, natcdRangeOptions* o) {
  *o = {};
  if (a.keys.size() > 1) {
    if (a.prefix || a.from_key)
      return Fail(
          kExitBadArgs,
          "too many arguments, only accept one argument when `--prefix` or `--from-key` is set.");
    o->range_end = a.keys[1].data();
    o->range_end_len = a.keys[1].size();
  }
  if (a.prefix && a.from_key)
    return Fail(kExitBadArgs,
                "`--prefix` and `--from-key` cannot be set at the same time, choose one.");
  o->prefix = a.prefix;
  o->from_key = a.from_key;
  o->revision = a.rev;
  o->limit = a.limit;
  o->keys_only = a.keys_only;
  o->count_only = a.count_only;
  o->serializable = a.consistency == "s";
  std::string sort_by = a.sort_by;
  std::string order = a.order;
  for (auto* s : {&sort_by, &order}) {
    for (char& ch : *s) ch = static_cast<char>(toupper(static_cast<unsigned char>(ch)));
  }
  if (order == "ASCEND") {
    o->sort_order = natcdSortOrder_Ascend;
  } else if (order == "DESCEND") {
    o->sort_order = natcdSortOrder_Descend;
  } else if (!order.empty()) {
    return Fail(4, "bad sort order " + a.order);
  }
  if (sort_by == "KEY" || sort_by.empty()) {
    o->sort_target = natcdSortTarget_Key;
  } else if (sort_by == "VERSION") {
    o->sort_target = natcdSortTarget_Version;
  } else if (sort_by == "CREATE") {
    o->sort_target = natcdSortTarget_Create;
  } else if (sort_by == "MODIFY") {
    o->sort_target = natcdSortTarget_Mod;
  } else if (sort_by == "VALUE") {
    o->sort_target = natcdSortTarget_Value;
  } else {
    return Fail(4, "bad sort target " + a.sort_by);
  }
  // etcd sorts ascending when a target is given without an order.
  if (o->sort_order == natcdSortOrder_None && o->sort_target != natcdSortTarget_Key) {
    o->sort_order = natcdSortOrder_Ascend;
  }
  return 0;
}

int CmdGet(const GetArgs& a) {
  natcdRangeOptions o;
  if (int rc = SetRangeOptions(a, &o)) return rc;
  std::string key = AllKeysIfEmpty(a.keys[0], &o.prefix, &o.from_key);
  Conn c;
  if (int rc = Open(&c)) return rc;
  natcdRangeResponse* resp = nullptr;
  natcdStatus s = natcdKV_Get(&resp, c.client, key.data(), key.size(), &o);
  if (s != natcdStatus_OK) return LibFail(s);
  GetFlags flags{a.keys_only, a.count_only, a.value_only};
  Write(printer.Get(*resp, flags));
  natcdRangeResponse_Destroy(resp);
  return 0;
}

struct DelArgs {
  std::vector<std::string> keys;
  bool prefix = false;
  bool from_key = false;
  bool prev_kv = false;
};

int CmdDel(const DelArgs& a) {
  natcdDeleteOptions o{};
  if (a.keys.size() > 1) {
    if (a.prefix || a.from_key)
      return Fail(
          kExitBadArgs,
          "too many arguments, only accept one argument when `--prefix` or `--from-key` is set.");
    o.range_end = a.keys[1].data();
    o.range_end_len = a.keys[1].size();
  }
  if (a.prefix && a.from_key)
    return Fail(kExitBadArgs,
                "`--prefix` and `--from-key` cannot be set at the same time, choose one.");
  o.prefix = a.prefix;
  o.from_key = a.from_key;
  o.prev_kv = a.prev_kv;
  std::string key = AllKeysIfEmpty(a.keys[0], &o.prefix, &o.from_key);
  Conn c;
  if (int rc = Open(&c)) return rc;
  natcdDeleteResponse* resp = nullptr;
  natcdStatus s = natcdKV_Delete(&resp, c.client, key.data(), key.size(), &o);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(printer.Del(*resp));
  natcdDeleteResponse_Destroy(resp);
  return 0;
}

int CmdCompaction(const std::string& rev_text, bool physical) {
  char* end = nullptr;
  long long rev = strtoll(rev_text.c_str(), &end, 10);
  if (rev_text.empty() || *end != '\0') return Fail(kExitBadArgs, "bad revision " + rev_text);
  Conn c;
  if (int rc = Open(&c)) return rc;
  natcdHeader h{};
  natcdStatus s = natcdKV_Compact(&h, c.client, rev, physical);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(printer.Compaction(h, rev));
  return 0;
}

// ---------------------------------------------------------------------------
// Leases
// ---------------------------------------------------------------------------

int CmdLeaseGrant(int64_t ttl) {
  Conn c;
  if (int rc = Open(&c)) return rc;
  int64_t id = 0;
  int64_t granted = 0;
  natcdStatus s = natcdLease_Grant(&id, &granted, c.client, ttl, 0);
  if (s != natcdStatus_OK) return LibFail(s);
  // The grant reply's header is not exposed by the library; a cheap read gives one.
  natcdHeader h{};
  natcdRangeOptions o{};
  o.count_only = true;
  natcdRangeResponse* r = nullptr;
  if (printer.format != Format::kSimple &&
      natcdKV_Get(&r, c.client, "\0", 1, &o) == natcdStatus_OK) {
    h = r->header;
  }
  natcdRangeResponse_Destroy(r);
  Write(printer.Grant(h, id, granted));
  return 0;
}

int CmdLeaseRevoke(const std::string& hex) {
  int64_t id = 0;
  if (!ParseLeaseId(hex, &id))
    return Fail(kExitBadArgs, "bad lease ID arg (" + hex + "), expecting ID in Hex");
  Conn c;
  if (int rc = Open(&c)) return rc;
  natcdStatus s = natcdLease_Revoke(c.client, id);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(printer.Revoke(id));
  return 0;
}

int CmdLeaseTimeToLive(const std::string& hex, bool keys) {
  int64_t id = 0;
  if (!ParseLeaseId(hex, &id))
    return Fail(kExitBadArgs, "bad lease ID arg (" + hex + "), expecting ID in Hex");
  Conn c;
  if (int rc = Open(&c)) return rc;
  natcdLeaseTimeToLive* t = nullptr;
  natcdStatus s = natcdLease_TimeToLive(&t, c.client, id, keys);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(printer.TimeToLive(*t, keys));
  natcdLeaseTimeToLive_Destroy(t);
  return 0;
}

int CmdLeaseList() {
  Conn c;
  if (int rc = Open(&c)) return rc;
  int64_t* ids = nullptr;
  size_t n = 0;
  natcdStatus s = natcdLease_Leases(&ids, &n, c.client);
  if (s != natcdStatus_OK) return LibFail(s);
  std::vector<int64_t> list(ids, ids + n);
  free(ids);
  Write(printer.Leases(list));
  return 0;
}

int CmdLeaseKeepAlive(const std::string& hex, bool once) {
  int64_t id = 0;
  if (!ParseLeaseId(hex, &id))
    return Fail(kExitBadArgs, "bad lease ID arg (" + hex + "), expecting ID in Hex");
  sigset_t set = WaitSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  Conn c;
  if (int rc = Open(&c)) return rc;
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
      Write(printer.KeepAlive(id, ttl));
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

// ---------------------------------------------------------------------------
// Watch
// ---------------------------------------------------------------------------

struct WatchArgs {
  std::vector<std::string> keys;
  bool prefix = false;
  int64_t rev = 0;
  bool prev_kv = false;
  bool value_only = false;
  std::vector<std::string> exec;
};

struct WatchState {
  const WatchArgs* args;
  bool ended = false;
};

void OnWatch(natcdWatch*, const natcdWatchNotice* n, void* closure) {
  auto* st = static_cast<WatchState*>(closure);
  if (n->kind == natcdWatchNotice_Event) {
    Write(printer.WatchEvent(*n, st->args->value_only));
    if (!st->args->exec.empty() && n->kv) {
      std::string key(n->kv->key, n->kv->key_len);
      std::string value(n->kv->value ? n->kv->value : "", n->kv->value_len);
      RunCommand(st->args->exec, {{"ETCD_WATCH_REVISION", std::to_string(n->revision)},
                                  {"ETCD_WATCH_EVENT_TYPE",
                                   GoQuote(n->type == natcdEventType_Delete ? "DELETE" : "PUT")},
                                  {"ETCD_WATCH_KEY", GoQuote(key)},
                                  {"ETCD_WATCH_VALUE", GoQuote(value)}});
    }
  } else if (n->kind == natcdWatchNotice_Progress) {
    Write("progress notify: " + std::to_string(n->revision) + "\n");
  } else {
    if (n->kind == natcdWatchNotice_Compacted) {
      fprintf(stderr,
              "watch was canceled (etcdserver: mvcc: required revision has been compacted)\n");
    } else {
      fprintf(stderr, "watch was canceled (%s)\n", n->text ? n->text : "failed");
    }
    st->ended = true;
    kill(getpid(), SIGUSR1);
  }
}

int CmdWatch(const WatchArgs& a) {
  if (a.keys.empty())
    return Fail(kExitBadArgs, "watch in non-interactive mode requires at least one argument");
  if (a.keys.size() > 1 && a.prefix)
    return Fail(kExitBadArgs,
                "too many arguments, only accept one argument when `--prefix` is set.");
  sigset_t set = WaitSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  Conn c;
  if (int rc = Open(&c)) return rc;
  natcdWatchOptions o{};
  o.prefix = a.prefix;
  o.prev_kv = a.prev_kv;
  std::string key = AllKeysIfEmpty(a.keys[0], &o.prefix, &o.from_key);
  WatchState st{&a};
  natcdWatch* w = nullptr;
  const std::string* end = a.keys.size() > 1 ? &a.keys[1] : nullptr;
  natcdStatus s =
      natcdWatch_Create(&w, c.client, key.data(), key.size(), end ? end->data() : nullptr,
                        end ? end->size() : 0, a.rev, &o, OnWatch, &st);
  if (s != natcdStatus_OK) return LibFail(s);
  int sig = 0;
  sigwait(&set, &sig);
  natcdWatch_Destroy(w);
  return st.ended ? kExitError : 0;
}

// ---------------------------------------------------------------------------
// Maintenance and cluster (raw requests: the library has no call for them)
// ---------------------------------------------------------------------------

// Sends `req` to P.<subject>; returns the reply (caller destroys) or prints the error.
natsMsg* Request(Conn* c, const std::string& subject, const ProtobufCMessage* req, int* rc) {
  std::vector<uint8_t> body(protobuf_c_message_get_packed_size(req) + 1);
  size_t n = protobuf_c_message_pack(req, body.data());
  natsMsg* reply = nullptr;
  natsStatus st = natsConnection_Request(&reply, c->nc, (g.prefix + "." + subject).c_str(),
                                         body.data(), static_cast<int>(n), TimeoutMs());
  if (st != NATS_OK) {
    *rc = Fail(kExitBadConnection, subject + ": " + natsStatus_GetText(st));
    return nullptr;
  }
  const char* err = nullptr;
  if (natsMsgHeader_Get(reply, "Nats-Service-Error", &err) == NATS_OK && err) {
    std::string text = err;
    if (size_t colon = text.find(": "); colon != std::string::npos) text = text.substr(colon + 2);
    *rc = Fail(kExitError, text);
    natsMsg_Destroy(reply);
    return nullptr;
  }
  return reply;
}

natcdHeader FromPb(const Natcd__V1__ResponseHeader* h) {
  natcdHeader out{};
  if (h) {
    out.cluster_id = h->cluster_id;
    out.member_id = h->member_id;
    out.revision = h->revision;
    out.raft_term = h->raft_term;
  }
  return out;
}

std::string HexId(uint64_t id) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRIx64, id);
  return buf;
}

int CmdEndpointStatus() {
  Conn c;
  if (int rc = Open(&c)) return rc;
  Natcd__V1__StatusRequest req = NATCD__V1__STATUS_REQUEST__INIT;
  int rc = 0;
  natsMsg* reply = Request(&c, "maint.status", &req.base, &rc);
  if (!reply) return rc;
  Natcd__V1__StatusResponse* r =
      natcd__v1__status_response__unpack(nullptr, natsMsg_GetDataLength(reply),
                                         reinterpret_cast<const uint8_t*>(natsMsg_GetData(reply)));
  natsMsg_Destroy(reply);
  if (!r) return Fail(kExitError, "maint.status: bad reply");
  natcdHeader h = FromPb(r->header);
  char url[256] = "";
  std::string endpoint =
      natsConnection_GetConnectedUrl(c.nc, url, sizeof url) == NATS_OK && url[0] ? url : g.nats_url;
  std::string errors;
  for (size_t i = 0; i < r->n_errors; ++i) errors += (i ? ", " : "") + std::string(r->errors[i]);
  std::vector<std::string> row = {endpoint,
                                  HexId(h.member_id),
                                  r->version,
                                  HumanBytes(r->dbsize),
                                  r->leader == h.member_id ? "true" : "false",
                                  r->islearner ? "true" : "false",
                                  std::to_string(r->raftterm),
                                  std::to_string(r->raftindex),
                                  std::to_string(r->raftappliedindex),
                                  errors};
  std::string out;
  switch (printer.format) {
    case Format::kJson: {
      out = "[{\"Endpoint\":" + JsonString(endpoint) + ",\"Status\":{\"header\":" + HeaderJson(h) +
            ",\"version\":" + JsonString(r->version) + ",\"dbSize\":" + std::to_string(r->dbsize) +
            ",\"leader\":" + std::to_string(r->leader) +
            ",\"raftIndex\":" + std::to_string(r->raftindex) +
            ",\"raftTerm\":" + std::to_string(r->raftterm) +
            ",\"raftAppliedIndex\":" + std::to_string(r->raftappliedindex) +
            ",\"dbSizeInUse\":" + std::to_string(r->dbsizeinuse) + "}}]\n";
      break;
    }
    case Format::kFields:
      out = HeaderFields(h) + "\"Version\" : " + GoQuote(r->version) +
            "\n\"DBSize\" : " + std::to_string(r->dbsize) +
            "\n\"Leader\" : " + std::to_string(r->leader) +
            "\n\"IsLearner\" : " + (r->islearner ? "true" : "false") +
            "\n\"RaftIndex\" : " + std::to_string(r->raftindex) +
            "\n\"RaftTerm\" : " + std::to_string(r->raftterm) +
            "\n\"RaftAppliedIndex\" : " + std::to_string(r->raftappliedindex) + "\n\"Errors\" : [" +
            errors + "]\n\"Endpoint\" : " + GoQuote(endpoint) + "\n\n";
      break;
    case Format::kTable:
      out = Table({"endpoint", "ID", "version", "db size", "is leader", "is learner", "raft term",
                   "raft index", "raft applied index", "errors"},
                  {row});
      break;
    default:
      for (size_t i = 0; i < row.size(); ++i) out += (i ? ", " : "") + row[i];
      out += "\n";
  }
  natcd__v1__status_response__free_unpacked(r, nullptr);
  Write(out);
  return 0;
}

std::string Join(char** items, size_t n, const char* sep) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? sep : "") + std::string(items[i]);
  return out;
}

int CmdMemberList() {
  Conn c;
  if (int rc = Open(&c)) return rc;
  Natcd__V1__MemberListRequest req = NATCD__V1__MEMBER_LIST_REQUEST__INIT;
  int rc = 0;
  natsMsg* reply = Request(&c, "cluster.member.list", &req.base, &rc);
  if (!reply) return rc;
  Natcd__V1__MemberListResponse* r = natcd__v1__member_list_response__unpack(
      nullptr, natsMsg_GetDataLength(reply),
      reinterpret_cast<const uint8_t*>(natsMsg_GetData(reply)));
  natsMsg_Destroy(reply);
  if (!r) return Fail(kExitError, "cluster.member.list: bad reply");
  natcdHeader h = FromPb(r->header);
  std::vector<std::vector<std::string>> rows;
  std::string out;
  if (printer.format == Format::kFields) out = HeaderFields(h);
  std::string members;
  for (size_t i = 0; i < r->n_members; ++i) {
    const Natcd__V1__Member* m = r->members[i];
    rows.push_back({HexId(m->id), "started", m->name, Join(m->peerurls, m->n_peerurls, ","),
                    Join(m->clienturls, m->n_clienturls, ","), m->islearner ? "true" : "false"});
    if (printer.format == Format::kFields) {
      out += "\"ID\" : " + std::to_string(m->id) + "\n\"Name\" : " + GoQuote(m->name) + "\n";
      for (size_t k = 0; k < m->n_peerurls; ++k)
        out += "\"PeerURL\" : " + GoQuote(m->peerurls[k]) + "\n";
      for (size_t k = 0; k < m->n_clienturls; ++k)
        out += "\"ClientURL\" : " + GoQuote(m->clienturls[k]) + "\n";
      out += std::string("\"IsLearner\" : ") + (m->islearner ? "true" : "false") + "\n\n";
    }
    std::string urls_p, urls_c;
    for (size_t k = 0; k < m->n_peerurls; ++k)
      urls_p += (k ? "," : "") + JsonString(m->peerurls[k]);
    for (size_t k = 0; k < m->n_clienturls; ++k)
      urls_c += (k ? "," : "") + JsonString(m->clienturls[k]);
    members += (i ? "," : "") + std::string("{\"ID\":") + std::to_string(m->id) +
               ",\"name\":" + JsonString(m->name) + ",\"peerURLs\":[" + urls_p +
               "],\"clientURLs\":[" + urls_c + "]" + (m->islearner ? ",\"isLearner\":true" : "") +
               "}";
  }
  switch (printer.format) {
    case Format::kJson:
      out = "{\"header\":" + HeaderJson(h) + ",\"members\":[" + members + "]}\n";
      break;
    case Format::kFields:
      break;
    case Format::kTable:
      out = Table({"ID", "status", "name", "peer addrs", "client addrs", "is learner"}, rows);
      break;
    default:
      for (const auto& row : rows) {
        for (size_t i = 0; i < row.size(); ++i) out += (i ? ", " : "") + row[i];
        out += "\n";
      }
  }
  natcd__v1__member_list_response__free_unpacked(r, nullptr);
  Write(out);
  return 0;
}

// member add / remove / promote: the change is committed when the reply
// comes; etcdctl's wording.
int CmdMemberChange(const std::string& verb, const std::string& arg, bool learner) {
  Conn c;
  if (int rc = Open(&c)) return rc;
  int rc = 0;
  natsMsg* reply = nullptr;
  uint64_t id = 0;
  if (verb == "add") {
    Natcd__V1__MemberAddRequest req = NATCD__V1__MEMBER_ADD_REQUEST__INIT;
    req.name = const_cast<char*>(arg.c_str());
    req.islearner = learner;
    reply = Request(&c, "cluster.member.add", &req.base, &rc);
  } else {
    int64_t parsed = 0;
    if (!ParseLeaseId(arg, &parsed)) {
      return Fail(kExitBadArgs, "bad member ID arg (" + arg + "), expecting ID in Hex");
    }
    id = static_cast<uint64_t>(parsed);
    if (verb == "remove") {
      Natcd__V1__MemberRemoveRequest req = NATCD__V1__MEMBER_REMOVE_REQUEST__INIT;
      req.id = id;
      reply = Request(&c, "cluster.member.remove", &req.base, &rc);
    } else {
      Natcd__V1__MemberPromoteRequest req = NATCD__V1__MEMBER_PROMOTE_REQUEST__INIT;
      req.id = id;
      reply = Request(&c, "cluster.member.promote", &req.base, &rc);
    }
  }
  if (!reply) return rc;
  // Every member response starts with the header (1) and lists members;
  // add also names the new member (2).
  uint64_t cluster_id = 0;
  if (verb == "add") {
    Natcd__V1__MemberAddResponse* r = natcd__v1__member_add_response__unpack(
        nullptr, natsMsg_GetDataLength(reply),
        reinterpret_cast<const uint8_t*>(natsMsg_GetData(reply)));
    natsMsg_Destroy(reply);
    if (!r) return Fail(kExitError, "cluster.member.add: bad reply");
    id = r->member ? r->member->id : 0;
    cluster_id = r->header ? r->header->cluster_id : 0;
    natcd__v1__member_add_response__free_unpacked(r, nullptr);
    Write("Member " + HexId(id) + " added to cluster " + HexId(cluster_id) + "\n\n" +
          "NATCD_NAME=\"" + arg + "\"\nNATCD_INITIAL_CLUSTER_STATE=\"existing\"\n");
    return 0;
  }
  Natcd__V1__MemberRemoveResponse* r = natcd__v1__member_remove_response__unpack(
      nullptr, natsMsg_GetDataLength(reply),
      reinterpret_cast<const uint8_t*>(natsMsg_GetData(reply)));
  natsMsg_Destroy(reply);
  if (!r) return Fail(kExitError, "cluster.member." + verb + ": bad reply");
  cluster_id = r->header ? r->header->cluster_id : 0;
  natcd__v1__member_remove_response__free_unpacked(r, nullptr);
  Write("Member " + HexId(id) + (verb == "remove" ? " removed from" : " promoted in") +
        " cluster " + HexId(cluster_id) + "\n");
  return 0;
}

// etcdctl move-leader: the leader (whichever member the request reaches
// forwards it) hands over to the target and answers once it leads.
int CmdMoveLeader(const std::string& arg) {
  int64_t parsed = 0;
  if (!ParseLeaseId(arg, &parsed)) {
    return Fail(kExitBadArgs, "bad member ID arg (" + arg + "), expecting ID in Hex");
  }
  Conn c;
  if (int rc = Open(&c)) return rc;
  int rc = 0;
  Natcd__V1__StatusRequest status = NATCD__V1__STATUS_REQUEST__INIT;
  natsMsg* reply = Request(&c, "maint.status", &status.base, &rc);
  if (!reply) return rc;
  Natcd__V1__StatusResponse* s =
      natcd__v1__status_response__unpack(nullptr, natsMsg_GetDataLength(reply),
                                         reinterpret_cast<const uint8_t*>(natsMsg_GetData(reply)));
  natsMsg_Destroy(reply);
  if (!s) return Fail(kExitError, "maint.status: bad reply");
  const uint64_t from = s->leader;
  natcd__v1__status_response__free_unpacked(s, nullptr);
  Natcd__V1__MoveLeaderRequest req = NATCD__V1__MOVE_LEADER_REQUEST__INIT;
  req.targetid = static_cast<uint64_t>(parsed);
  reply = Request(&c, "maint.moveleader", &req.base, &rc);
  if (!reply) return rc;
  natsMsg_Destroy(reply);
  Write("Leadership transferred from " + HexId(from) + " to " + HexId(req.targetid) + "\n");
  return 0;
}

// ---------------------------------------------------------------------------
// Txn: etcdctl's syntax (compares, blank line, success ops, blank line, failure ops)
// ---------------------------------------------------------------------------

int ParseCompare(natcdTxn* txn, const std::string& line) {
  size_t lp = line.find('(');
  if (lp == std::string::npos) return Fail(kExitBadArgs, "malformed comparison: " + line);
  std::string target = line.substr(0, lp);
  std::string rest = line.substr(lp + 1);
  size_t close = std::string::npos;
  if (!rest.empty() && rest[0] == '"') {
    size_t j = 1;
    while (j < rest.size() && rest[j] != '"') j += rest[j] == '\\' ? 2 : 1;
    close = j + 1;
  }
  std::string key;
  if (close == std::string::npos || close >= rest.size() || rest[close] != ')' ||
      !GoUnquote(rest.substr(0, close), &key)) {
    return Fail(kExitBadArgs, "malformed comparison: " + line);
  }
  std::vector<std::string> tail = Argify(rest.substr(close + 1));
  if (tail.size() != 2) return Fail(kExitBadArgs, "malformed comparison: " + line);
  const std::string& op_text = tail[0];
  const std::string& val = tail[1];
  natcdCompareOp op;
  if (op_text == "=" || op_text == "==") {
    op = natcdCompare_Equal;
  } else if (op_text == "!=") {
    op = natcdCompare_NotEqual;
  } else if (op_text == "<") {
    op = natcdCompare_Less;
  } else if (op_text == ">") {
    op = natcdCompare_Greater;
  } else {
    return Fail(kExitBadArgs, "invalid compare operation \"" + op_text + "\"");
  }
  auto number = [&](int base, int64_t* v) {
    char* end = nullptr;
    *v = strtoll(val.c_str(), &end, base);
    return !val.empty() && *end == '\0';
  };
  int64_t v = 0;
  natcdStatus s;
  if (target == "ver" || target == "version") {
    if (!number(10, &v)) return Fail(kExitBadArgs, "invalid version " + val);
    s = natcdTxn_IfVersion(txn, key.data(), key.size(), op, v);
  } else if (target == "c" || target == "create") {
    if (!number(10, &v)) return Fail(kExitBadArgs, "invalid revision " + val);
    s = natcdTxn_IfCreateRevision(txn, key.data(), key.size(), op, v);
  } else if (target == "m" || target == "mod") {
    if (!number(10, &v)) return Fail(kExitBadArgs, "invalid revision " + val);
    s = natcdTxn_IfModRevision(txn, key.data(), key.size(), op, v);
  } else if (target == "val" || target == "value") {
    s = natcdTxn_IfValue(txn, key.data(), key.size(), op, val.data(), val.size());
  } else if (target == "lease") {
    if (!number(16, &v)) return Fail(kExitBadArgs, "invalid lease ID " + val);
    s = natcdTxn_IfLease(txn, key.data(), key.size(), op, v);
  } else {
    return Fail(kExitBadArgs, "malformed comparison: " + line + "; got " + target);
  }
  return s == natcdStatus_OK ? 0 : LibFail(s);
}

// One request line: put/get/del with their flags.
int ParseRequest(natcdTxn* txn, const std::string& line, bool then) {
  std::vector<std::string> w = Argify(line);
  if (w.empty()) return 0;
  std::vector<std::string> pos;
  std::vector<std::string> flags;
  bool dashdash = false;
  for (size_t i = 1; i < w.size(); ++i) {
    if (!dashdash && w[i] == "--") {
      dashdash = true;
    } else if (!dashdash && w[i].rfind("--", 0) == 0) {
      flags.push_back(w[i]);
    } else {
      pos.push_back(w[i]);
    }
  }
  auto has = [&](const char* f) {
    for (const auto& x : flags) {
      if (x == f) return true;
    }
    return false;
  };
  auto val = [&](const char* f) -> std::string {
    std::string p = std::string(f) + "=";
    for (const auto& x : flags) {
      if (x.rfind(p, 0) == 0) return x.substr(p.size());
    }
    return "";
  };
  const std::string& cmd = w[0];
  natcdStatus s = natcdStatus_OK;
  if (cmd == "put") {
    if (pos.size() != 2) return Fail(kExitBadArgs, "put command needs 2 arguments in txn: " + line);
    natcdPutOptions o{};
    if (!val("--lease").empty() && !ParseLeaseId(val("--lease"), &o.lease)) {
      return Fail(kExitBadArgs, "bad lease ID in txn: " + line);
    }
    o.prev_kv = has("--prev-kv");
    o.ignore_lease = has("--ignore-lease");
    s = (then ? natcdTxn_ThenPut : natcdTxn_ElsePut)(txn, pos[0].data(), pos[0].size(),
                                                     pos[1].data(), pos[1].size(), &o);
  } else if (cmd == "get") {
    if (pos.empty() || pos.size() > 2)
      return Fail(kExitBadArgs, "get command needs 1 or 2 arguments in txn: " + line);
    natcdRangeOptions o{};
    if (pos.size() == 2) {
      o.range_end = pos[1].data();
      o.range_end_len = pos[1].size();
    }
    o.prefix = has("--prefix");
    o.from_key = has("--from-key");
    o.keys_only = has("--keys-only");
    o.count_only = has("--count-only");
    if (!val("--limit").empty()) o.limit = atoll(val("--limit").c_str());
    if (!val("--rev").empty()) o.revision = atoll(val("--rev").c_str());
    s = (then ? natcdTxn_ThenGet : natcdTxn_ElseGet)(txn, pos[0].data(), pos[0].size(), &o);
  } else if (cmd == "del" || cmd == "delete") {
    if (pos.empty() || pos.size() > 2)
      return Fail(kExitBadArgs, "del command needs 1 or 2 arguments in txn: " + line);
    natcdDeleteOptions o{};
    if (pos.size() == 2) {
      o.range_end = pos[1].data();
      o.range_end_len = pos[1].size();
    }
    o.prefix = has("--prefix");
    o.from_key = has("--from-key");
    o.prev_kv = has("--prev-kv");
    s = (then ? natcdTxn_ThenDelete : natcdTxn_ElseDelete)(txn, pos[0].data(), pos[0].size(), &o);
  } else {
    return Fail(kExitBadArgs, "unknown op in txn: " + line);
  }
  return s == natcdStatus_OK ? 0 : LibFail(s);
}

int CmdTxn(bool interactive) {
  natcdTxn* txn = nullptr;
  natcdTxn_Create(&txn);
  struct Guard {
    natcdTxn* t;
    ~Guard() { natcdTxn_Destroy(t); }
  } guard{txn};
  const char* prompts[] = {"compares:\n", "success requests (get, put, del):\n",
                           "failure requests (get, put, del):\n"};
  int section = 0;
  if (interactive) fputs(prompts[0], stdout);
  std::string line;
  while (section < 3 && std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) {
      ++section;
      if (interactive && section < 3) fputs(prompts[section], stdout);
      continue;
    }
    int rc = section == 0 ? ParseCompare(txn, line) : ParseRequest(txn, line, section == 1);
    if (rc) return rc;
  }
  if (interactive) fputs("\n", stdout);
  Conn c;
  if (int rc = Open(&c)) return rc;
  natcdTxnResponse* resp = nullptr;
  natcdStatus s = natcdTxn_Commit(&resp, c.client, txn);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(printer.Txn(*resp));
  natcdTxnResponse_Destroy(resp);
  return 0;
}

// ---------------------------------------------------------------------------
// Lock and election
// ---------------------------------------------------------------------------

void OnSessionLost(natcdSession*, void*) { kill(getpid(), SIGUSR1); }

int CmdLock(const std::string& name, const std::vector<std::string>& command, int64_t ttl) {
  sigset_t set = WaitSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  Conn c;
  if (int rc = Open(&c)) return rc;
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

void OnObserve(natcdObserver*, const natcdKeyValue* leader, void*) {
  if (leader) Write(KvSimple(*leader, false));
}

int CmdElect(const std::string& name, const std::vector<std::string>& proposal, bool listen,
             int64_t ttl) {
  if (listen == !proposal.empty()) {
    return Fail(kExitBadArgs, listen ? "no proposal argument but -l is set"
                                     : "elect takes a proposal argument without -l");
  }
  sigset_t set = WaitSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  Conn c;
  if (int rc = Open(&c)) return rc;
  int sig = 0;
  if (listen) {
    natcdElection* e = nullptr;
    natcdObserver* o = nullptr;
    natcdStatus s = natcdElection_Create(&e, c.client, nullptr, name.c_str());
    if (s == natcdStatus_OK) s = natcdElection_Observe(&o, e, OnObserve, nullptr);
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
  Write(KvSimple(*leader, false));
  natcdKeyValue_Destroy(leader);
  sigwait(&set, &sig);
  int rc = sig == SIGUSR1 ? Fail(kExitError, "elect: session expired") : 0;
  natcdElection_Resign(e);
  natcdElection_Destroy(e);
  natcdSession_Destroy(session);
  return rc;
}

}  // namespace
}  // namespace natcdctl

int main(int argc, char** argv) {
  using namespace natcdctl;
  signal(SIGPIPE, SIG_IGN);
  // Everything after the first "--" that follows `watch` or `lock` is the
  // command to run (etcdctl's `watch key -- cmd args`).
  std::vector<std::string> exec_args;
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
    for (++i; i < argc; ++i) exec_args.push_back(argv[i]);
  }

  CLI::App app{"natcdctl: a command line client for natcd (etcdctl's commands over NATS)."};
  app.require_subcommand(1);
  app.fallthrough();
  auto global = [&](const char* flag, std::string& value, const char* env, const char* help) {
    return app.add_option(flag, value, help)->envname(env)->capture_default_str();
  };
  global("--nats-url,--endpoints", g.nats_url, "NATCDCTL_NATS_URL",
         "NATS server URL(s), comma-separated");
  global("--prefix", g.prefix, "NATCDCTL_PREFIX", "natcd's subject prefix");
  global("--user", g.user, "NATCDCTL_USER", "NATS user (username[:password] as etcdctl)");
  global("--password", g.password, "NATCDCTL_PASSWORD", "NATS password");
  global("--token", g.token, "NATCDCTL_TOKEN", "NATS token");
  global("--creds", g.creds, "NATCDCTL_CREDS", "NATS credentials file (JWT + nkey)");
  global("--tls-ca,--cacert", g.tls_ca, "NATCDCTL_TLS_CA", "CA certificate file for the server");
  global("--tls-cert,--cert", g.tls_cert, "NATCDCTL_TLS_CERT", "client certificate file");
  global("--tls-key,--key", g.tls_key, "NATCDCTL_TLS_KEY", "client key file");
  global("--command-timeout", g.command_timeout, "NATCDCTL_COMMAND_TIMEOUT",
         "timeout for short running command (excluding dial timeout)");
  global("-w,--write-out", g.write_out, "NATCDCTL_WRITE_OUT",
         "set the output format (simple, json, fields, table)")
      ->check(CLI::IsMember({"simple", "json", "fields", "table"}));
  global("--dial-timeout", g.dial_timeout, "NATCDCTL_DIAL_TIMEOUT",
         "dial timeout for the NATS connection");
  app.add_flag("--hex", g.hex, "print byte strings as hex encoded strings")
      ->envname("NATCDCTL_HEX");

  int rc = 0;

  PutArgs put;
  auto* put_cmd = app.add_subcommand("put", "Puts the given key into the store");
  put_cmd->add_option("key", put.key, "key")->required();
  put_cmd->add_option("value", put.value, "value (read from stdin when omitted)")->expected(0, 1);
  put_cmd->add_option("--lease", put.lease, "lease ID (in hexadecimal) to attach to the key");
  put_cmd->add_flag("--prev-kv", put.prev_kv,
                    "return the previous key-value pair before modification");
  put_cmd->add_flag("--ignore-value", put.ignore_value, "updates the key using its current value");
  put_cmd->add_flag("--ignore-lease", put.ignore_lease, "updates the key using its current lease");
  put_cmd->callback([&] { rc = CmdPut(put); });

  GetArgs get;
  auto* get_cmd = app.add_subcommand("get", "Gets the key or a range of keys");
  get_cmd->add_option("key", get.keys, "key [range_end]")->required()->expected(1, 2);
  get_cmd->add_flag("--prefix", get.prefix, "get a range of keys with matching prefix");
  get_cmd->add_flag("--from-key", get.from_key,
                    "get keys that are greater than or equal to the given key using byte compare");
  get_cmd->add_option("--rev", get.rev, "specify the kv revision");
  get_cmd->add_option("--limit", get.limit, "maximum number of results");
  get_cmd->add_option("--sort-by", get.sort_by,
                      "sort target; CREATE, KEY, MODIFY, VALUE, or VERSION");
  get_cmd->add_option("--order", get.order,
                      "order of results; ASCEND or DESCEND (ASCEND by default)");
  get_cmd->add_option("--consistency", get.consistency, "linearizable(l) or serializable(s)");
  get_cmd->add_flag("--keys-only", get.keys_only, "get only the keys");
  get_cmd->add_flag("--count-only", get.count_only, "get only the count");
  get_cmd->add_flag("--print-value-only", get.value_only,
                    "only write values when using the \"simple\" output format");
  get_cmd->callback([&] { rc = CmdGet(get); });

  DelArgs del;
  auto* del_cmd =
      app.add_subcommand("del", "Removes the specified key or range of keys [key, range_end)");
  del_cmd->add_option("key", del.keys, "key [range_end]")->required()->expected(1, 2);
  del_cmd->add_flag("--prefix", del.prefix, "delete keys with matching prefix");
  del_cmd->add_flag(
      "--from-key", del.from_key,
      "delete keys that are greater than or equal to the given key using byte compare");
  del_cmd->add_flag("--prev-kv", del.prev_kv, "return deleted key-value pairs");
  del_cmd->callback([&] { rc = CmdDel(del); });

  bool txn_interactive = false;
  auto* txn_cmd = app.add_subcommand(
      "txn", "Txn processes all the requests in one transaction (read from stdin)");
  txn_cmd->add_flag("-i,--interactive", txn_interactive, "input transaction in interactive mode");
  txn_cmd->callback([&] { rc = CmdTxn(txn_interactive); });

  std::string compact_rev;
  bool physical = false;
  auto* compact_cmd = app.add_subcommand("compaction", "Compacts the event history in natcd");
  compact_cmd->add_option("revision", compact_rev, "revision")->required();
  compact_cmd->add_flag("--physical", physical, "wait for the compaction to be on disk");
  compact_cmd->callback([&] { rc = CmdCompaction(compact_rev, physical); });

  WatchArgs watch;
  auto* watch_cmd = app.add_subcommand(
      "watch", "Watches events stream on keys or prefixes (-- command args: run per event)");
  watch_cmd->add_option("key", watch.keys, "key [range_end]")->expected(0, 2);
  watch_cmd->add_flag("--prefix", watch.prefix, "watch on a prefix if prefix is set");
  watch_cmd->add_option("--rev", watch.rev, "revision to start watching");
  watch_cmd->add_flag("--prev-kv", watch.prev_kv,
                      "get the previous key-value pair before the event happens");
  watch_cmd->add_flag("--print-value-only", watch.value_only,
                      "only write values when using the \"simple\" output format");
  watch_cmd->callback([&] {
    watch.exec = exec_args;
    rc = CmdWatch(watch);
  });

  auto* lease_cmd = app.add_subcommand("lease", "Lease related commands");
  lease_cmd->require_subcommand(1);
  int64_t ttl = 0;
  std::string lease_id;
  bool with_keys = false;
  bool once = false;
  auto* grant = lease_cmd->add_subcommand("grant", "Creates leases");
  grant->add_option("ttl", ttl, "TTL in seconds")->required();
  grant->callback([&] { rc = CmdLeaseGrant(ttl); });
  auto* revoke = lease_cmd->add_subcommand("revoke", "Revokes leases");
  revoke->add_option("leaseID", lease_id, "lease ID in hexadecimal")->required();
  revoke->callback([&] { rc = CmdLeaseRevoke(lease_id); });
  auto* ttl_cmd = lease_cmd->add_subcommand("timetolive", "Get lease information");
  ttl_cmd->add_option("leaseID", lease_id, "lease ID in hexadecimal")->required();
  ttl_cmd->add_flag("--keys", with_keys, "Get keys attached to this lease");
  ttl_cmd->callback([&] { rc = CmdLeaseTimeToLive(lease_id, with_keys); });
  auto* list = lease_cmd->add_subcommand("list", "List all active leases");
  list->callback([&] { rc = CmdLeaseList(); });
  auto* keep = lease_cmd->add_subcommand("keep-alive", "Keeps leases alive (renew)");
  keep->add_option("leaseID", lease_id, "lease ID in hexadecimal")->required();
  keep->add_flag("--once", once,
                 "Resets the keep-alive time to its original value and exits immediately");
  keep->callback([&] { rc = CmdLeaseKeepAlive(lease_id, once); });

  auto* endpoint_cmd = app.add_subcommand("endpoint", "Endpoint related commands");
  endpoint_cmd->require_subcommand(1);
  endpoint_cmd->add_subcommand("status", "Prints out the status of the endpoint")->callback([&] {
    rc = CmdEndpointStatus();
  });
  auto* member_cmd = app.add_subcommand("member", "Membership related commands");
  member_cmd->require_subcommand(1);
  member_cmd->add_subcommand("list", "Lists all members in the cluster")->callback([&] {
    rc = CmdMemberList();
  });
  std::string member_arg;
  bool member_learner = false;
  auto* member_add = member_cmd->add_subcommand(
      "add",
      "Adds a member into the cluster (start it with that --name, not in --initial-cluster)");
  member_add->add_option("name", member_arg, "the new member's name")->required();
  member_add->add_flag("--learner", member_learner, "indicates if the new member is raft learner");
  member_add->callback([&] { rc = CmdMemberChange("add", member_arg, member_learner); });
  auto* member_remove = member_cmd->add_subcommand("remove", "Removes a member from the cluster");
  member_remove->add_option("memberID", member_arg, "the member's ID in hex")->required();
  member_remove->callback([&] { rc = CmdMemberChange("remove", member_arg, false); });
  auto* member_promote =
      member_cmd->add_subcommand("promote", "Promotes a non-voting member in the cluster");
  member_promote->add_option("memberID", member_arg, "the member's ID in hex")->required();
  member_promote->callback([&] { rc = CmdMemberChange("promote", member_arg, false); });

  std::string transferee;
  auto* move_leader = app.add_subcommand("move-leader", "Transfers leadership to another member");
  move_leader->add_option("transferee-member-id", transferee, "the member's ID in hex")->required();
  move_leader->callback([&] { rc = CmdMoveLeader(transferee); });

  app.add_subcommand("version", "Prints the version of natcdctl")->callback([&] {
    Write("natcdctl version: " + std::string(kVersion) + "\nAPI version: 3.5\n");
  });

  std::string lock_name;
  std::vector<std::string> lock_cmd_args;
  int64_t session_ttl = 60;
  auto* lock_cmd =
      app.add_subcommand("lock", "Acquires a named lock (and runs a command holding it)");
  lock_cmd->add_option("lockname", lock_name, "lock name")->required();
  lock_cmd->add_option("command", lock_cmd_args, "command to run while holding the lock");
  lock_cmd->add_option("--ttl", session_ttl, "timeout for session")->capture_default_str();
  lock_cmd->callback([&] {
    std::vector<std::string> command = lock_cmd_args;
    command.insert(command.end(), exec_args.begin(), exec_args.end());
    rc = CmdLock(lock_name, command, session_ttl);
  });

  std::string elect_name;
  std::vector<std::string> proposal;
  bool listen = false;
  auto* elect_cmd = app.add_subcommand("elect", "Observes and participates in leader election");
  elect_cmd->add_option("election-name", elect_name, "election name")->required();
  elect_cmd->add_option("proposal", proposal, "value to campaign with")->expected(0, 1);
  elect_cmd->add_flag("-l,--listen", listen, "observation mode");
  elect_cmd->add_option("--ttl", session_ttl, "timeout for session")->capture_default_str();
  elect_cmd->callback([&] { rc = CmdElect(elect_name, proposal, listen, session_ttl); });

  app.parse_complete_callback([&] {
    printer.format = g.write_out == "json"     ? Format::kJson
                     : g.write_out == "fields" ? Format::kFields
                     : g.write_out == "table"  ? Format::kTable
                                               : Format::kSimple;
    hex_output = g.hex;
    if (ParseDurationMs(g.command_timeout) <= 0) {
      throw CLI::ValidationError("--command-timeout", "bad duration " + g.command_timeout);
    }
    if (ParseDurationMs(g.dial_timeout) <= 0) {
      throw CLI::ValidationError("--dial-timeout", "bad duration " + g.dial_timeout);
    }
    // etcdctl's --user accepts "name:password".
    if (size_t colon = g.user.find(':'); colon != std::string::npos && g.password.empty()) {
      g.password = g.user.substr(colon + 1);
      g.user = g.user.substr(0, colon);
    }
  });

  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  nats_Close();
  return rc;
}
