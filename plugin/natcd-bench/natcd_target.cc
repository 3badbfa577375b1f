#include "plugin/natcd-bench/natcd_target.h"

#include <cstdlib>

#include "adapters/nats/natcd.pb-c.h"
#include "plugin/natcd-bench/etcd_messages.h"
#include "plugin/natcd-bench/proto_pack.h"

namespace natcd::bench {
namespace {

const char* SubjectSuffix(Call call) {
  switch (call) {
    case Call::kPut:
      return ".kv.put";
    case Call::kRange:
      return ".kv.range";
    case Call::kTxn:
      return ".kv.txn";
    case Call::kLeaseGrant:
      return ".lease.grant";
    case Call::kLeaseKeepAlive:
      return ".lease.keepalive";
  }
  return "";
}

}  // namespace

NatcdTarget::NatcdTarget(natsConnection* nc, std::string prefix)
    : nc_(nc), prefix_(std::move(prefix)) {}

bool NatcdTarget::BeginLoad(int slots, ReplySink* sink) {
  slot_op_.assign(slots, Op::kPut);
  slot_request_.assign(slots, 0);
  return requests_.Begin(nc_, slots, sink,
                         [this](int slot, natsMsg* reply) { return Judge(slot, reply); });
}

void NatcdTarget::Issue(int slot, Op op, uint64_t i) {
  slot_op_[slot] = op;
  slot_request_[slot] = i;
  int64_t lease = 0;
  if (op == Op::kKeepAlive) lease = keepalive_lease_;
  if (op == Op::kPutLeased) lease = i < leases_.size() ? leases_[i] : 0;
  const EtcdRequest request = BuildRequest(op, i, lease, lease_ttl_s_);
  const std::string subject = prefix_ + SubjectSuffix(request.call);
  requests_.Send(slot, subject.c_str(), request.body.data(), static_cast<int>(request.body.size()));
}

bool NatcdTarget::Judge(int slot, natsMsg* reply) {
  if (!NoServiceError(reply)) return false;
  const Op op = slot_op_[slot];
  if (op == Op::kLeaseGrant) {
    int64_t id = 0;
    if (!ParseLeaseGrant(natsMsg_GetData(reply), natsMsg_GetDataLength(reply), &id)) return false;
    const uint64_t i = slot_request_[slot];
    if (i < leases_.size()) leases_[i] = id;
    return true;
  }
  if (op == Op::kKeepAlive) {
    int64_t ttl = 0;
    return ParseKeepAlive(natsMsg_GetData(reply), natsMsg_GetDataLength(reply), &ttl) && ttl > 0;
  }
  return true;
}

void NatcdTarget::EndLoad() { requests_.End(); }

bool NatcdTarget::Call(const std::string& subject, const std::string& body, std::string* out) {
  natsMsg* reply = nullptr;
  if (natsConnection_Request(&reply, nc_, subject.c_str(), body.data(),
                             static_cast<int>(body.size()), 10'000) != NATS_OK) {
    return false;
  }
  const bool ok = NoServiceError(reply);
  if (ok) out->assign(natsMsg_GetData(reply), natsMsg_GetDataLength(reply));
  natsMsg_Destroy(reply);
  return ok;
}

bool NatcdTarget::PrepareKeepAlive() {
  const EtcdRequest grant = BuildRequest(Op::kLeaseGrant, 0, 0, 600);
  std::string reply;
  return Call(prefix_ + ".lease.grant", grant.body, &reply) &&
         ParseLeaseGrant(reply.data(), reply.size(), &keepalive_lease_);
}

void NatcdTarget::ReserveLeases(uint64_t leases) { leases_.assign(leases, 0); }

bool NatcdTarget::ResetCounter() {
  std::string reply;
  return Call(prefix_ + ".kv.put", PutCounterBody(0), &reply);
}

bool NatcdTarget::ReadCounter(Counter* out) {
  std::string reply;
  return Call(prefix_ + ".kv.range", ReadCounterBody(), &reply) &&
         ParseCounter(reply.data(), reply.size(), out);
}

CasOutcome NatcdTarget::SwapCounter(const Counter& seen, Counter* now, bool* now_known) {
  std::string reply;
  bool swapped = false;
  if (!Call(prefix_ + ".kv.txn", SwapCounterBody(seen), &reply) ||
      !ParseSwap(reply.data(), reply.size(), seen, &swapped, now)) {
    return CasOutcome::kError;
  }
  *now_known = true;
  return swapped ? CasOutcome::kSwapped : CasOutcome::kConflict;
}

int64_t NatcdTarget::CountKeys(const std::string& space) {
  std::string reply;
  int64_t count = -1;
  if (!Call(prefix_ + ".kv.range", CountBody(space), &reply) ||
      !ParseCount(reply.data(), reply.size(), &count)) {
    return -1;
  }
  return count;
}

void NatcdTarget::OnWatchMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* self = static_cast<NatcdTarget*>(closure);
  int64_t watch_id = 0;
  bool created = false, canceled = false;
  uint64_t seq = 0;
  const bool ok = ParseWatchResponse(natsMsg_GetData(msg), natsMsg_GetDataLength(msg),
                                     self->event_sink_, &watch_id, &created, &canceled, &seq);
  natsMsg_Destroy(msg);
  if (!ok || seq == 0) return;
  // Acknowledge every message, as natcd's flow control asks of a client:
  // a watcher that did not would be stopped after 64 messages.
  Natcd__V1__WatchAckRequest ack = NATCD__V1__WATCH_ACK_REQUEST__INIT;
  ack.watch_id = watch_id;
  ack.seq = seq;
  const std::string body = Pack(&ack.base);
  const std::string subject = self->prefix_ + ".watch.ack";
  natsConnection_Publish(self->nc_, subject.c_str(), body.data(), static_cast<int>(body.size()));
}

bool NatcdTarget::OpenWatchers(int watchers, EventSink* sink) {
  event_sink_ = sink;
  char* inbox = nullptr;
  if (natsInbox_Create(&inbox) != NATS_OK) return false;
  watch_inbox_ = std::string(inbox) + ".";
  free(inbox);
  // One wildcard subscription for every watcher: one delivery thread, as a
  // client process multiplexing its watches would have.
  if (natsConnection_Subscribe(&watch_sub_, nc_, (watch_inbox_ + "*").c_str(),
                               &NatcdTarget::OnWatchMessage, this) != NATS_OK) {
    return false;
  }
  natsSubscription_SetPendingLimits(watch_sub_, -1, -1);
  const std::string key = SlashKey("w/");
  const std::string end = PrefixEnd(key);
  watch_ids_.clear();
  for (int w = 0; w < watchers; ++w) {
    const std::string deliver = watch_inbox_ + std::to_string(w);
    Natcd__V1__WatchCreateRequest create = NATCD__V1__WATCH_CREATE_REQUEST__INIT;
    create.key = {key.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(key.data()))};
    create.range_end = {end.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(end.data()))};
    create.deliver_subject = const_cast<char*>(deliver.c_str());
    std::string reply;
    if (!Call(prefix_ + ".watch.create", Pack(&create.base), &reply)) return false;
    int64_t id = 0;
    bool created = false, canceled = false;
    uint64_t seq = 0;
    if (!ParseWatchResponse(reply.data(), reply.size(), nullptr, &id, &created, &canceled, &seq) ||
        !created) {
      return false;
    }
    watch_ids_.push_back(id);
  }
  return true;
}

void NatcdTarget::CloseWatchers() {
  for (int64_t id : watch_ids_) {
    Natcd__V1__WatchCancelRequest cancel = NATCD__V1__WATCH_CANCEL_REQUEST__INIT;
    cancel.watch_id = id;
    std::string reply;
    (void)Call(prefix_ + ".watch.cancel", Pack(&cancel.base), &reply);
  }
  watch_ids_.clear();
  if (watch_sub_ != nullptr) {
    natsSubscription_Drain(watch_sub_);
    natsSubscription_WaitForDrainCompletion(watch_sub_, 5'000);
    natsSubscription_Destroy(watch_sub_);
    watch_sub_ = nullptr;
  }
  event_sink_ = nullptr;
}

}  // namespace natcd::bench
