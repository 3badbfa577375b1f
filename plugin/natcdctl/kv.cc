// natcdctl put, get, del.
#include <cctype>
#include <memory>

#include "plugin/natcdctl/commands.h"

namespace natcdctl {
namespace {

struct PutArgs {
  std::string key;
  std::vector<std::string> value;  // at most one
  std::string lease = "0";
  bool prev_kv = false;
  bool ignore_value = false;
  bool ignore_lease = false;
};

int Put(Context& ctx, const PutArgs& a) {
  if (a.value.size() > 1)
    return Fail(kExitBadArgs, "put command needs 1 argument and input from stdin or 2 arguments");
  std::string value;
  if (!a.value.empty()) {
    value = a.value[0];
  } else if (!a.ignore_value) {
    value = ReadAll(stdin);
  }
  natcdPutOptions opts{};
  if (!ParseHexId(a.lease, &opts.lease))
    return Fail(kExitBadArgs, "bad lease ID (" + a.lease + "), expecting ID in Hex");
  opts.prev_kv = a.prev_kv;
  opts.ignore_value = a.ignore_value;
  opts.ignore_lease = a.ignore_lease;
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdPutResponse* resp = nullptr;
  natcdStatus s =
      natcdKV_Put(&resp, c.client, a.key.data(), a.key.size(), value.data(), value.size(), &opts);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(ctx.printer.Put(*resp));
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
  int64_t min_create_rev = 0;
  int64_t max_create_rev = 0;
  int64_t min_mod_rev = 0;
  int64_t max_mod_rev = 0;
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
  o->min_create_revision = a.min_create_rev;
  o->max_create_revision = a.max_create_rev;
  o->min_mod_revision = a.min_mod_rev;
  o->max_mod_revision = a.max_mod_rev;
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
    return Fail(kExitBadFeature, "bad sort order " + a.order);
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
    return Fail(kExitBadFeature, "bad sort target " + a.sort_by);
  }
  // etcd sorts ascending when a target is given without an order.
  if (o->sort_order == natcdSortOrder_None && o->sort_target != natcdSortTarget_Key) {
    o->sort_order = natcdSortOrder_Ascend;
  }
  return 0;
}

int Get(Context& ctx, const GetArgs& a) {
  natcdRangeOptions o;
  if (int rc = SetRangeOptions(a, &o)) return rc;
  std::string key = AllKeysIfEmpty(a.keys[0], &o.prefix, &o.from_key);
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdRangeResponse* resp = nullptr;
  natcdStatus s = natcdKV_Get(&resp, c.client, key.data(), key.size(), &o);
  if (s != natcdStatus_OK) return LibFail(s);
  GetFlags flags{a.keys_only, a.count_only, a.value_only};
  Write(ctx.printer.Get(*resp, flags));
  natcdRangeResponse_Destroy(resp);
  return 0;
}

struct DelArgs {
  std::vector<std::string> keys;
  bool prefix = false;
  bool from_key = false;
  bool prev_kv = false;
};

int Del(Context& ctx, const DelArgs& a) {
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
  if (int rc = ctx.Open(&c)) return rc;
  natcdDeleteResponse* resp = nullptr;
  natcdStatus s = natcdKV_Delete(&resp, c.client, key.data(), key.size(), &o);
  if (s != natcdStatus_OK) return LibFail(s);
  Write(ctx.printer.Del(*resp));
  natcdDeleteResponse_Destroy(resp);
  return 0;
}

}  // namespace

void AddKvCommands(CLI::App& app, Context& ctx) {
  auto put = std::make_shared<PutArgs>();
  auto* put_cmd = app.add_subcommand("put", "Puts the given key into the store");
  put_cmd->add_option("key", put->key, "key")->required();
  put_cmd->add_option("value", put->value, "value (read from stdin when omitted)")->expected(0, 1);
  put_cmd->add_option("--lease", put->lease, "lease ID (in hexadecimal) to attach to the key");
  put_cmd->add_flag("--prev-kv", put->prev_kv,
                    "return the previous key-value pair before modification");
  put_cmd->add_flag("--ignore-value", put->ignore_value, "updates the key using its current value");
  put_cmd->add_flag("--ignore-lease", put->ignore_lease, "updates the key using its current lease");
  put_cmd->callback([&ctx, put] { ctx.rc = Put(ctx, *put); });

  auto get = std::make_shared<GetArgs>();
  auto* get_cmd = app.add_subcommand("get", "Gets the key or a range of keys");
  get_cmd->add_option("key", get->keys, "key [range_end]")->required()->expected(1, 2);
  get_cmd->add_flag("--prefix", get->prefix, "get a range of keys with matching prefix");
  get_cmd->add_flag("--from-key", get->from_key,
                    "get keys that are greater than or equal to the given key using byte compare");
  get_cmd->add_option("--rev", get->rev, "specify the kv revision");
  get_cmd->add_option("--limit", get->limit, "maximum number of results");
  get_cmd->add_option("--sort-by", get->sort_by,
                      "sort target; CREATE, KEY, MODIFY, VALUE, or VERSION");
  get_cmd->add_option("--order", get->order,
                      "order of results; ASCEND or DESCEND (ASCEND by default)");
  get_cmd->add_option("--consistency", get->consistency, "linearizable(l) or serializable(s)");
  get_cmd->add_flag("--keys-only", get->keys_only, "get only the keys");
  get_cmd->add_flag("--count-only", get->count_only, "get only the count");
  get_cmd->add_flag("--print-value-only", get->value_only,
                    "only write values when using the \"simple\" output format");
  // etcdctl 3.6's revision filters (3.4 has none).
  get_cmd->add_option("--min-create-rev", get->min_create_rev, "minimum create revision");
  get_cmd->add_option("--max-create-rev", get->max_create_rev, "maximum create revision");
  get_cmd->add_option("--min-mod-rev", get->min_mod_rev, "minimum modification revision");
  get_cmd->add_option("--max-mod-rev", get->max_mod_rev, "maximum modification revision");
  get_cmd->callback([&ctx, get] { ctx.rc = Get(ctx, *get); });

  auto del = std::make_shared<DelArgs>();
  auto* del_cmd =
      app.add_subcommand("del", "Removes the specified key or range of keys [key, range_end)");
  del_cmd->add_option("key", del->keys, "key [range_end]")->required()->expected(1, 2);
  del_cmd->add_flag("--prefix", del->prefix, "delete keys with matching prefix");
  del_cmd->add_flag(
      "--from-key", del->from_key,
      "delete keys that are greater than or equal to the given key using byte compare");
  del_cmd->add_flag("--prev-kv", del->prev_kv, "return deleted key-value pairs");
  del_cmd->callback([&ctx, del] { ctx.rc = Del(ctx, *del); });
}

}  // namespace natcdctl
