#include "raft/sim/linearizability.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace natcd::raft::sim {
namespace {

// One call or return event in a doubly linked list ordered by time;
// linearizing an operation lifts its two events out of the list, and
// backtracking puts them back.
struct Event {
  bool is_call = false;
  size_t op = 0;           // index into the key's operations
  Event* match = nullptr;  // the call's return, or the return's call
  Event* prev = nullptr;
  Event* next = nullptr;
};

// Applies op to state. False when the op's recorded output is impossible
// from this state.
bool Step(const KvOp& op, const std::string& state, std::string* next) {
  bool returned = op.ret != KvOp::kNever;
  switch (op.kind) {
    case OpKind::kPut:
      *next = op.value;
      return true;
    case OpKind::kGet:
      *next = state;
      return !returned || op.output == state;
    case OpKind::kCas: {
      bool matches = state == op.expected;
      *next = matches ? op.value : state;
      return !returned || op.ok == matches;
    }
  }
  return false;
}

struct CacheKey {
  std::vector<uint64_t> linearized;
  std::string state;
  bool operator==(const CacheKey&) const = default;
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    size_t h = std::hash<std::string>()(k.state);
    for (uint64_t w : k.linearized) h = h * 1000003u ^ std::hash<uint64_t>()(w);
    return h;
  }
};

// Wing & Gong with memoization over one key's operations.
bool CheckKey(const std::vector<const KvOp*>& ops, uint64_t max_steps, bool* gave_up) {
  size_t n = ops.size();
  std::vector<Event> events(2 * n);
  std::vector<Event*> order;
  order.reserve(2 * n);
  for (size_t i = 0; i < n; i++) {
    Event* call = &events[2 * i];
    Event* ret = &events[2 * i + 1];
    call->is_call = true;
    call->op = ret->op = i;
    call->match = ret;
    ret->match = call;
    order.push_back(call);
    order.push_back(ret);
  }
  // By time; at equal times calls first (the permissive order: such
  // operations count as concurrent).
  std::stable_sort(order.begin(), order.end(), [&](const Event* a, const Event* b) {
    int64_t ta = a->is_call ? ops[a->op]->call : ops[a->op]->ret;
    int64_t tb = b->is_call ? ops[b->op]->call : ops[b->op]->ret;
    if (ta != tb) return ta < tb;
    return a->is_call && !b->is_call;
  });
  Event head;
  Event* prev = &head;
  for (Event* e : order) {
    prev->next = e;
    e->prev = prev;
    prev = e;
  }

  auto lift = [](Event* call) {
    call->prev->next = call->next;
    if (call->next) call->next->prev = call->prev;
    Event* ret = call->match;
    ret->prev->next = ret->next;
    if (ret->next) ret->next->prev = ret->prev;
  };
  auto unlift = [](Event* call) {
    Event* ret = call->match;
    ret->prev->next = ret;
    if (ret->next) ret->next->prev = ret;
    call->prev->next = call;
    if (call->next) call->next->prev = call;
  };

  std::vector<uint64_t> linearized((n + 63) / 64, 0);
  std::unordered_set<CacheKey, CacheKeyHash> cache;
  struct Frame {
    Event* call;
    std::string state;
  };
  std::vector<Frame> stack;
  std::string state;  // every key starts absent
  Event* entry = head.next;
  uint64_t steps = 0;
  while (head.next != nullptr) {
    if (max_steps != 0 && ++steps > max_steps) {
      *gave_up = true;
      return false;
    }
    if (entry->is_call) {
      std::string next;
      if (Step(*ops[entry->op], state, &next)) {
        size_t i = entry->op;
        linearized[i / 64] |= uint64_t{1} << (i % 64);
        if (cache.insert(CacheKey{linearized, next}).second) {
          stack.push_back(Frame{entry, state});
          state = std::move(next);
          lift(entry);
          entry = head.next;
          continue;
        }
        linearized[i / 64] &= ~(uint64_t{1} << (i % 64));
      }
      entry = entry->next;
    } else {
      // A return whose call cannot be linearized before it: backtrack.
      if (stack.empty()) return false;
      Frame top = std::move(stack.back());
      stack.pop_back();
      state = std::move(top.state);
      size_t i = top.call->op;
      linearized[i / 64] &= ~(uint64_t{1} << (i % 64));
      unlift(top.call);
      entry = top.call->next;
    }
  }
  return true;
}

}  // namespace

CheckResult CheckLinearizable(const std::vector<KvOp>& history, uint64_t max_steps) {
  std::map<std::string, std::vector<const KvOp*>> by_key;
  for (const KvOp& op : history) by_key[op.key].push_back(&op);
  CheckResult result;
  for (const auto& [key, ops] : by_key) {
    bool gave_up = false;
    if (!CheckKey(ops, max_steps, &gave_up)) {
      result.linearizable = false;
      result.gave_up = gave_up;
      result.key = key;
      return result;
    }
  }
  return result;
}

}  // namespace natcd::raft::sim
