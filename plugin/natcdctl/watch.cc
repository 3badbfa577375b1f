// natcdctl watch: one watch from the command line until interrupted, or
// (-i) etcdctl's interactive mode: `watch ...` and `progress` lines from
// stdin, each watch printing as it goes.
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <mutex>
#include <thread>

#include "plugin/natcdctl/commands.h"
#include "plugin/natcdctl/format.h"

namespace natcdctl {
namespace {

struct WatchArgs {
  std::vector<std::string> keys;  // key [range_end]
  bool prefix = false;
  int64_t rev = 0;
  bool prev_kv = false;
  bool value_only = false;
  bool interactive = false;
  std::vector<std::string> exec;
};

// What one watch's handler needs (it runs on the watch's own thread).
struct WatchSink {
  const Printer* printer;
  bool value_only;
  std::vector<std::string> exec;
  // A canceled watch ends the run (not in interactive mode: the others go on).
  bool cancel_ends_run;
  bool canceled = false;
};

void OnWatch(natcdWatch*, const natcdWatchNotice* n, void* closure) {
  auto* sink = static_cast<WatchSink*>(closure);
  if (n->kind == natcdWatchNotice_Event) {
    Write(sink->printer->WatchEvent(*n, sink->value_only));
    if (!sink->exec.empty() && n->kv) {
      std::string key(n->kv->key, n->kv->key_len);
      std::string value(n->kv->value ? n->kv->value : "", n->kv->value_len);
      RunCommand(sink->exec, {{"ETCD_WATCH_REVISION", std::to_string(n->revision)},
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
    sink->canceled = true;
    if (sink->cancel_ends_run) kill(getpid(), SIGUSR1);
  }
}

// A watch and its sink, destroyed together (the watch first: its handler
// uses the sink).
struct ActiveWatch {
  std::unique_ptr<WatchSink> sink;
  natcdWatch* watch = nullptr;
  ~ActiveWatch() { natcdWatch_Destroy(watch); }
};

// Starts the watch `a` describes. Prints the error (its exit code in *rc)
// on failure.
std::unique_ptr<ActiveWatch> StartWatch(const Context& ctx, const Conn& c, const WatchArgs& a,
                                        bool cancel_ends_run, int* rc) {
  natcdWatchOptions o{};
  o.prefix = a.prefix;
  o.prev_kv = a.prev_kv;
  std::string key = AllKeysIfEmpty(a.keys[0], &o.prefix, &o.from_key);
  auto w = std::make_unique<ActiveWatch>();
  w->sink =
      std::make_unique<WatchSink>(WatchSink{&ctx.printer, a.value_only, a.exec, cancel_ends_run});
  const std::string* end = a.keys.size() > 1 ? &a.keys[1] : nullptr;
  natcdStatus s =
      natcdWatch_Create(&w->watch, c.client, key.data(), key.size(), end ? end->data() : nullptr,
                        end ? end->size() : 0, a.rev, &o, OnWatch, w->sink.get());
  if (s != natcdStatus_OK) {
    *rc = LibFail(s);
    return nullptr;
  }
  return w;
}

int CheckKeys(const WatchArgs& a) {
  if (a.keys.size() > 1 && a.prefix)
    return Fail(kExitBadArgs,
                "too many arguments, only accept one argument when `--prefix` is set.");
  return 0;
}

int WatchOne(Context& ctx, const WatchArgs& a) {
  if (a.keys.empty())
    return Fail(kExitBadArgs, "watch in non-interactive mode requires at least one argument");
  if (int rc = CheckKeys(a)) return rc;
  sigset_t set = WaitSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  int rc = 0;
  std::unique_ptr<ActiveWatch> w = StartWatch(ctx, c, a, true, &rc);
  if (!w) return rc;
  int sig = 0;
  sigwait(&set, &sig);
  const bool canceled = w->sink->canceled;
  w.reset();
  return canceled ? kExitError : 0;
}

// Interactive mode: the watches the lines asked for, and how the run ends.
struct Interactive {
  Context* ctx;
  const WatchArgs* defaults;  // the command line's flags apply to every line
  std::mutex mu;
  std::unique_ptr<Conn> conn = std::make_unique<Conn>();  // guarded by mu
  std::vector<std::unique_ptr<ActiveWatch>> watches;      // guarded by mu
  bool stopping = false;                                  // guarded by mu
  int rc = 0;                                             // guarded by mu; set before SIGUSR1
};

// A `watch` line's words after "watch": the watch command's flags,
// key [range_end], and "--" then a command to run per event.
bool ParseWatchLine(const std::vector<std::string>& words, WatchArgs* a, std::string* error) {
  a->keys.clear();
  a->exec.clear();
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--") {
      a->exec.assign(words.begin() + static_cast<long>(i) + 1, words.end());
      break;
    }
    if (w == "--prefix") {
      a->prefix = true;
    } else if (w == "--prev-kv") {
      a->prev_kv = true;
    } else if (w == "--print-value-only") {
      a->value_only = true;
    } else if (w == "--rev" || w.rfind("--rev=", 0) == 0) {
      std::string v = w == "--rev" ? (i + 1 < words.size() ? words[++i] : "") : w.substr(6);
      char* end = nullptr;
      a->rev = strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') {
        *error = "invalid argument \"" + v + "\" for \"--rev\" flag";
        return false;
      }
    } else if (w.size() > 1 && w[0] == '-') {
      *error = "unknown flag: " + w;
      return false;
    } else {
      a->keys.push_back(w);
    }
  }
  return true;
}

// One stdin line, as etcdctl's watchInteractiveFunc takes it. Returns an
// exit code to end the run with, or -1 to go on.
int HandleLine(Interactive* in, const std::string& line) {
  std::vector<std::string> words = Argify(line);
  if (words.empty()) {
    fprintf(stderr, "Invalid command: %s (watch and progress supported)\n", line.c_str());
    return -1;
  }
  if (words[0] == "watch") {
    if (words.size() < 2) {
      fprintf(stderr, "Invalid command %s (command type or key is not provided)\n", line.c_str());
      return -1;
    }
    WatchArgs a = *in->defaults;
    std::string error;
    if (!ParseWatchLine(words, &a, &error)) return Fail(kExitBadArgs, error);
    if (a.keys.empty()) {
      fprintf(stderr, "Invalid command %s (command type or key is not provided)\n", line.c_str());
      return -1;
    }
    if (int rc = CheckKeys(a)) return rc;
    std::lock_guard<std::mutex> lock(in->mu);
    if (in->stopping) return -1;
    int rc = 0;
    std::unique_ptr<ActiveWatch> w = StartWatch(*in->ctx, *in->conn, a, false, &rc);
    if (!w) return rc;
    in->watches.push_back(std::move(w));
    return -1;
  }
  if (words[0] == "progress") {
    std::lock_guard<std::mutex> lock(in->mu);
    if (in->stopping) return -1;
    for (auto& w : in->watches) {
      natcdStatus s = natcdWatch_RequestProgress(w->watch);
      if (s != natcdStatus_OK && !w->sink->canceled) return LibFail(s);
    }
    return -1;
  }
  fprintf(stderr, "Invalid command %s (only support watch)\n", line.c_str());
  return -1;
}

// Reads stdin with read(2), not stdio: the thread may still be blocked in
// it when the run ends.
void ReadLines(Interactive* in) {
  std::string buffered;
  char buf[4096];
  for (;;) {
    size_t nl;
    while ((nl = buffered.find('\n')) != std::string::npos) {
      std::string line = buffered.substr(0, nl);
      buffered.erase(0, nl + 1);
      int rc = HandleLine(in, line);
      if (rc >= 0) {
        std::lock_guard<std::mutex> lock(in->mu);
        in->rc = rc;
        kill(getpid(), SIGUSR1);
        return;
      }
    }
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffered.append(buf, static_cast<size_t>(n));
  }
  std::lock_guard<std::mutex> lock(in->mu);
  if (in->stopping) return;
  in->rc = Fail(kExitInvalidInput, "Error reading watch request line: EOF");
  kill(getpid(), SIGUSR1);
}

int WatchInteractive(Context& ctx, const WatchArgs& a) {
  sigset_t set = WaitSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  auto in = std::make_shared<Interactive>();
  in->ctx = &ctx;
  in->defaults = &a;
  if (int rc = ctx.Open(in->conn.get())) return rc;
  // Detached: it may be blocked reading when the run ends; `in` outlives
  // the run through its reference.
  std::thread([in] { ReadLines(in.get()); }).detach();
  int sig = 0;
  sigwait(&set, &sig);
  std::lock_guard<std::mutex> lock(in->mu);
  in->stopping = true;
  in->watches.clear();
  in->conn.reset();
  return sig == SIGUSR1 ? in->rc : 0;
}

}  // namespace

void AddWatchCommand(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<WatchArgs>();
  auto* watch_cmd = app.add_subcommand(
      "watch", "Watches events stream on keys or prefixes (-- command args: run per event)");
  watch_cmd->add_option("key", a->keys, "key [range_end]")->expected(0, 2);
  watch_cmd->add_flag("-i,--interactive", a->interactive, "interactive mode");
  watch_cmd->add_flag("--prefix", a->prefix, "watch on a prefix if prefix is set");
  watch_cmd->add_option("--rev", a->rev, "revision to start watching");
  watch_cmd->add_flag("--prev-kv", a->prev_kv,
                      "get the previous key-value pair before the event happens");
  watch_cmd->add_flag("--print-value-only", a->value_only,
                      "only write values when using the \"simple\" output format");
  watch_cmd->callback([&ctx, a] {
    a->exec = ctx.exec_args;
    ctx.rc = a->interactive ? WatchInteractive(ctx, *a) : WatchOne(ctx, *a);
  });
}

}  // namespace natcdctl
