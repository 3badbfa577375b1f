#include "raft/sim/kv_state_machine.h"

#include <sstream>

namespace natcd::raft::sim {
namespace {
// Fields are printable strings made by the simulator; a length prefix
// keeps the format unambiguous anyway.
void PutField(std::string* out, const std::string& s) {
  *out += std::to_string(s.size());
  *out += ':';
  *out += s;
}
bool GetField(const std::string& in, size_t* pos, std::string* s) {
  size_t colon = in.find(':', *pos);
  if (colon == std::string::npos) return false;
  size_t len = 0;
  try {
    len = std::stoul(in.substr(*pos, colon - *pos));
  } catch (...) {
    return false;
  }
  if (colon + 1 + len > in.size()) return false;
  *s = in.substr(colon + 1, len);
  *pos = colon + 1 + len;
  return true;
}
}  // namespace

std::string EncodeCommand(const Command& c) {
  std::string out;
  PutField(&out, std::to_string(c.op_id));
  PutField(&out, std::to_string(static_cast<int>(c.kind)));
  PutField(&out, c.key);
  PutField(&out, c.value);
  PutField(&out, c.expected);
  return out;
}

std::optional<Command> DecodeCommand(const std::string& data) {
  Command c;
  std::string id, kind;
  size_t pos = 0;
  if (!GetField(data, &pos, &id) || !GetField(data, &pos, &kind) || !GetField(data, &pos, &c.key) ||
      !GetField(data, &pos, &c.value) || !GetField(data, &pos, &c.expected) || pos != data.size()) {
    return std::nullopt;
  }
  c.op_id = std::stoull(id);
  c.kind = static_cast<OpKind>(std::stoi(kind));
  return c;
}

CommandResult KvStateMachine::Apply(const Command& c) {
  CommandResult r;
  if (!applied_ops_.insert(c.op_id).second) {
    r.duplicate = true;
    return r;
  }
  switch (c.kind) {
    case OpKind::kPut:
      kv_[c.key] = c.value;
      r.ok = true;
      break;
    case OpKind::kGet:
      r.value = Get(c.key);
      r.ok = true;
      break;
    case OpKind::kCas:
      if (Get(c.key) == c.expected) {
        kv_[c.key] = c.value;
        r.ok = true;
      }
      break;
  }
  return r;
}

std::string KvStateMachine::Get(const std::string& key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? std::string() : it->second;
}

std::string KvStateMachine::Snapshot() const {
  std::string out;
  PutField(&out, std::to_string(kv_.size()));
  for (const auto& [k, v] : kv_) {
    PutField(&out, k);
    PutField(&out, v);
  }
  PutField(&out, std::to_string(applied_ops_.size()));
  for (uint64_t id : applied_ops_) PutField(&out, std::to_string(id));
  return out;
}

bool KvStateMachine::Restore(const std::string& data) {
  KvStateMachine fresh;
  if (data.empty()) {  // the bootstrap snapshot: nothing applied yet
    *this = std::move(fresh);
    return true;
  }
  size_t pos = 0;
  std::string count;
  if (!GetField(data, &pos, &count)) return false;
  for (size_t i = 0, n = std::stoul(count); i < n; i++) {
    std::string k, v;
    if (!GetField(data, &pos, &k) || !GetField(data, &pos, &v)) return false;
    fresh.kv_[k] = v;
  }
  if (!GetField(data, &pos, &count)) return false;
  for (size_t i = 0, n = std::stoul(count); i < n; i++) {
    std::string id;
    if (!GetField(data, &pos, &id)) return false;
    fresh.applied_ops_.insert(std::stoull(id));
  }
  *this = std::move(fresh);
  return true;
}

}  // namespace natcd::raft::sim
