// The KV client workload and its history (simulation_impl.h).
#include "raft/sim/simulation_impl.h"

namespace natcd::raft::sim {

// ---------------------------------------------------------------------------
// Clients

void Simulation::Call(NodeId to, server::RequestPayload payload, std::string request_id,
                      std::function<void(Result<Response>)> on_answer) {
  const uint64_t call = ++next_call_;
  calls_[call] = PendingCall{std::move(payload), std::move(request_id), std::move(on_answer)};
  Packet p;
  p.kind = Packet::Kind::kClient;
  p.to = to;
  p.call = call;
  network_.Send(std::move(p), now_);
}

void Simulation::RunClients() {
  for (size_t c = 0; c < clients_.size(); c++) {
    Client& client = clients_[c];
    if (client.busy && now_ >= client.deadline) {
      Trace("client %zu: op %llu attempt %d timed out", c,
            static_cast<unsigned long long>(client.serial), client.attempts);
      RetryOrGiveUp(c);
    }
    if (!client.busy && faulty_ && now_ >= client.next_at) StartOp(c);
  }
}

void Simulation::StartOp(size_t c) {
  Client& client = clients_[c];
  client.busy = true;
  client.serial = ++next_serial_;
  client.attempts = 0;
  client.request_id.clear();
  client.key = "k" + std::to_string(Rand(0, kKeys - 1));
  const int dice = static_cast<int>(Rand(0, 99));
  client.kind = dice < 30   ? CallKind::kPut
                : dice < 38 ? CallKind::kDelete
                : dice < 58 ? CallKind::kCas
                : dice < 85 ? CallKind::kGet
                            : CallKind::kSerializableGet;
  const std::string value = "v" + std::to_string(client.serial);
  KvOp op;
  op.key = client.key;
  switch (client.kind) {
    case CallKind::kPut: {
      op.kind = OpKind::kPut;
      op.value = value;
      PutRequest put;
      put.key = client.key;
      put.value = value;
      client.payload = put;
      client.request_id = "c" + std::to_string(client.serial);
      written_[value] = client.key;
      break;
    }
    case CallKind::kDelete: {
      // For the checker a delete is a put of "absent".
      op.kind = OpKind::kPut;
      DeleteRangeRequest del;
      del.key = client.key;
      client.payload = del;
      client.request_id = "c" + std::to_string(client.serial);
      break;
    }
    case CallKind::kCas: {
      op.kind = OpKind::kCas;
      op.value = value;
      op.expected = Chance(0.8) ? last_value_[client.key] : "";
      TxnRequest txn;
      Compare cmp;
      cmp.key = client.key;
      cmp.result = Compare::Result::kEqual;
      if (op.expected.empty()) {
        cmp.target = Compare::Target::kVersion;
        cmp.version = 0;
      } else {
        cmp.target = Compare::Target::kValue;
        cmp.value = op.expected;
      }
      txn.compare.push_back(cmp);
      PutRequest put;
      put.key = client.key;
      put.value = value;
      txn.success.push_back(RequestOp{put});
      client.payload = txn;
      client.request_id = "c" + std::to_string(client.serial);
      written_[value] = client.key;
      break;
    }
    case CallKind::kGet:
    case CallKind::kSerializableGet: {
      op.kind = OpKind::kGet;
      RangeRequest range;
      range.key = client.key;
      range.serializable = client.kind == CallKind::kSerializableGet;
      client.payload = range;
      break;
    }
  }
  if (client.kind != CallKind::kSerializableGet) {
    op.call = Stamp();
    client.op = history_.size();
    history_.push_back(op);
    discarded_.push_back(false);
  }
  SendAttempt(c);
}

void Simulation::SendAttempt(size_t c) {
  Client& client = clients_[c];
  SimMember* to = RandomMember();
  client.attempts++;
  client.deadline = now_ + kClientTimeoutMs;
  const uint64_t serial = client.serial;
  const NodeId target = to->id;
  Trace("client %zu: op %llu (%d on %s) attempt %d to %s", c,
        static_cast<unsigned long long>(serial), static_cast<int>(client.kind), client.key.c_str(),
        client.attempts, to->name.c_str());
  Call(
      to->id, client.payload, client.request_id,
      [this, c, serial, target](Result<Response> answer) {
        if (finished_) return;
        if (clients_[c].kind == CallKind::kSerializableGet && answer.ok() && clients_[c].busy &&
            clients_[c].serial == serial) {
          // Monotonic per member incarnation.
          SimMember& m = *members_.at(target);
          const RangeResponse* range = As<RangeResponse>(answer, "serializable range");
          if (range == nullptr) return;
          const int64_t rev = range->header.revision;
          if (rev < m.serializable_revision) {
            Fail(Str("serializable read on %s went back from revision %lld to %lld", m.name.c_str(),
                     static_cast<long long>(m.serializable_revision), static_cast<long long>(rev)));
          }
          m.serializable_revision = std::max(m.serializable_revision, rev);
        }
        OnAnswer(c, serial, std::move(answer));
      });
}

void Simulation::RetryOrGiveUp(size_t c) {
  Client& client = clients_[c];
  const bool write = client.kind == CallKind::kPut || client.kind == CallKind::kDelete ||
                     client.kind == CallKind::kCas;
  if (write && client.attempts < kWriteAttempts) {
    result_.stats.retries++;
    SendAttempt(c);
    return;
  }
  if (write) {
    // Unknown: it may take effect at any time from its call on, or never.
    result_.stats.ops_unknown++;
    Trace("client %zu: op %llu outcome unknown", c, static_cast<unsigned long long>(client.serial));
  } else if (client.kind == CallKind::kGet) {
    discarded_[client.op] = true;  // a read that returned nothing has no effect
  }
  client.busy = false;
  client.next_at = now_ + Rand(0, 50);
}

void Simulation::Observe(const KeyValue& kv, const char* where) {
  auto [it, first] = seen_.emplace(std::make_pair(kv.key, kv.mod_revision), kv.value);
  if (!first && it->second != kv.value) {
    Fail(Str("%s: key %s at revision %lld holds '%s', elsewhere '%s'", where, kv.key.c_str(),
             static_cast<long long>(kv.mod_revision), kv.value.c_str(), it->second.c_str()));
  }
}

void Simulation::OnAnswer(size_t c, uint64_t serial, Result<Response> answer) {
  Client& client = clients_[c];
  if (!client.busy || client.serial != serial) return;  // an answer to an op given up on
  if (!answer.ok()) {
    Trace("client %zu: op %llu failed: %s", c, static_cast<unsigned long long>(serial),
          answer.status().ToString().c_str());
    // Whatever the error, a write may have happened (ErrTimeout says so;
    // others too, after an earlier attempt): send it again.
    RetryOrGiveUp(c);
    return;
  }
  KvOp* op = client.kind == CallKind::kSerializableGet ? nullptr : &history_[client.op];
  std::string output;
  switch (client.kind) {
    case CallKind::kPut: {
      const PutResponse* typed = As<PutResponse>(answer, "put");
      if (typed == nullptr) return;
      const PutResponse& put = *typed;
      op->ok = true;
      acked_.push_back(AckedWrite{client.key, op->value, put.header.revision});
      Observe(KeyValue{client.key, 0, put.header.revision, 0, op->value, 0}, "put");
      last_value_[client.key] = op->value;
      break;
    }
    case CallKind::kDelete: {
      const DeleteRangeResponse* typed = As<DeleteRangeResponse>(answer, "delete");
      if (typed == nullptr) return;
      op->ok = true;
      // A delete that found the key took a revision: the key is absent at it.
      if (typed->deleted > 0) acked_.push_back(AckedWrite{client.key, "", typed->header.revision});
      last_value_[client.key] = "";
      break;
    }
    case CallKind::kCas: {
      const TxnResponse* typed = As<TxnResponse>(answer, "txn");
      if (typed == nullptr) return;
      const TxnResponse& txn = *typed;
      op->ok = txn.succeeded;
      if (txn.succeeded) {
        acked_.push_back(AckedWrite{client.key, op->value, txn.header.revision});
        Observe(KeyValue{client.key, 0, txn.header.revision, 0, op->value, 0}, "txn");
        last_value_[client.key] = op->value;
      }
      output = txn.succeeded ? "ok" : "failed";
      break;
    }
    case CallKind::kGet:
    case CallKind::kSerializableGet: {
      const RangeResponse* typed = As<RangeResponse>(answer, "range");
      if (typed == nullptr) return;
      const RangeResponse& range = *typed;
      for (const KeyValue& kv : range.kvs) Observe(kv, "range");
      output = range.kvs.empty() ? "" : range.kvs[0].value;
      if (!output.empty() && written_.count(output) == 0) {
        Fail("a read of " + client.key + " returned '" + output + "', never written");
      }
      if (!output.empty() && written_.count(output) != 0 && written_[output] != client.key) {
        Fail("a read of " + client.key + " returned '" + output + "', written to another key");
      }
      if (op != nullptr) {
        op->output = output;
        last_value_[client.key] = output;
      } else {
        result_.stats.serializable_reads++;
      }
      break;
    }
  }
  if (op != nullptr) op->ret = Stamp();
  result_.stats.ops_acknowledged++;
  Trace("client %zu: op %llu done '%s'", c, static_cast<unsigned long long>(serial),
        output.c_str());
  client.busy = false;
  client.next_at = now_ + Rand(0, 50);
}

}  // namespace natcd::raft::sim
