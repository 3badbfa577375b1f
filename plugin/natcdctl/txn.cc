// natcdctl txn: etcdctl's syntax (compares, blank line, success ops, blank
// line, failure ops), from stdin, with prompts in interactive mode.
#include <iostream>
#include <memory>

#include "plugin/natcdctl/commands.h"
#include "plugin/natcdctl/format.h"

namespace natcdctl {
namespace {

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
    if (!val("--lease").empty() && !ParseHexId(val("--lease"), &o.lease)) {
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

int Txn(Context& ctx, bool interactive) {
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
  if (int rc = ctx.Open(&c)) return rc;
  natcdTxnResponse* resp = nullptr;
  natcdStatus s = natcdTxn_Commit(&resp, c.client, txn);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(ctx.printer.Txn(*resp));
  natcdTxnResponse_Destroy(resp);
  return 0;
}

}  // namespace

void AddTxnCommand(CLI::App& app, Context& ctx) {
  auto interactive = std::make_shared<bool>(false);
  auto* txn_cmd = app.add_subcommand(
      "txn", "Txn processes all the requests in one transaction (read from stdin)");
  txn_cmd->add_flag("-i,--interactive", *interactive, "input transaction in interactive mode");
  txn_cmd->callback([&ctx, interactive] { ctx.rc = Txn(ctx, *interactive); });
}

}  // namespace natcdctl
