#include "plugin/natcd-bench/natcd_target.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

NatcdTarget::NatcdTarget(natsConnection* nc, std::string prefix, bool watch_groups)
    : nc_(nc), prefix_(std::move(prefix)), watch_groups_(watch_groups) {}

NatcdTarget::~NatcdTarget() { CloseWatchers(); }

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

void NatcdTarget::Ack(int64_t watch_id, uint64_t seq, bool group_subscribed, int64_t group_id) {
  Natcd__V1__WatchAckRequest ack = NATCD__V1__WATCH_ACK_REQUEST__INIT;
  ack.watch_id = watch_id;
  ack.seq = seq;
  ack.group_subscribed = group_subscribed;
  ack.group_id = group_id;
  const std::string body = Pack(&ack.base);
  const std::string subject = prefix_ + ".watch.ack";
  natsConnection_Publish(nc_, subject.c_str(), body.data(), static_cast<int>(body.size()));
}

void NatcdTarget::OnWatchMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* self = static_cast<NatcdTarget*>(closure);
  auto* r = natcd__v1__watch_response__unpack(
      nullptr, natsMsg_GetDataLength(msg), reinterpret_cast<const uint8_t*>(natsMsg_GetData(msg)));
  const char* subject = natsMsg_GetSubject(msg);
  const char* dot = strrchr(subject, '.');
  const size_t index = dot != nullptr ? strtoul(dot + 1, nullptr, 10) : 0;
  natsMsg_Destroy(msg);
  if (r == nullptr) return;
  if (r->seq == 0) {
    natcd__v1__watch_response__free_unpacked(r, nullptr);
    return;
  }
  bool subscribed = false;
  if (r->group_id != 0 && r->n_events == 0 && !r->canceled && index < self->members_.size()) {
    GroupMember& member = *self->members_[index];
    if (r->group_subject != nullptr && r->group_subject[0] != '\0') {
      // The offer: subscribe, and make sure the server has the
      // subscription (another connection) before saying so.
      if (member.sub == nullptr &&
          natsConnection_Subscribe(&member.sub, self->group_nc_, r->group_subject,
                                   &NatcdTarget::OnGroupMessage, &member) == NATS_OK) {
        natsSubscription_SetPendingLimits(member.sub, -1, -1);
        member.group_id = r->group_id;
        member.watch_id = r->watch_id;  // read by OnGroupMessage after the join
        subscribed = natsConnection_FlushTimeout(self->group_nc_, 10'000) == NATS_OK;
      }
    } else if (r->group_id == member.group_id && r->group_seq > 0) {
      member.join_seq = r->group_seq;  // the join
      ++self->joined_;
    }
  } else if (self->event_sink_ != nullptr) {
    for (size_t e = 0; e < r->n_events; ++e) {
      const Natcd__V1__KeyValue* kv = r->events[e]->kv;
      if (kv != nullptr) self->event_sink_->OnEvent(kv->value.data, kv->value.len);
    }
  }
  // Acknowledge every message, as natcd's flow control asks of a client:
  // a watcher that did not would be stopped after 64 messages.
  self->Ack(r->watch_id, r->seq, subscribed, subscribed ? r->group_id : 0);
  natcd__v1__watch_response__free_unpacked(r, nullptr);
}

void NatcdTarget::OnGroupMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* member = static_cast<GroupMember*>(closure);
  NatcdTarget* self = member->self;
  auto* r = natcd__v1__watch_response__unpack(
      nullptr, natsMsg_GetDataLength(msg), reinterpret_cast<const uint8_t*>(natsMsg_GetData(msg)));
  natsMsg_Destroy(msg);
  if (r == nullptr) return;
  const uint64_t join_seq = member->join_seq.load();
  // Before the join (and for messages before the join's seq) the watcher's
  // own stream has the events.
  if (join_seq != 0 && r->group_seq >= join_seq) {
    // group_seq runs 1, 2, 3...: a jump is messages NATS dropped (a slow
    // subscriber), whose events this watcher will never see.
    const uint64_t due = member->next_seq != 0 ? member->next_seq : join_seq;
    if (r->group_seq > due) {
      ++self->group_gaps_;
      self->group_messages_missed_ += r->group_seq - due;
    }
    member->next_seq = std::max(member->next_seq, r->group_seq + 1);
    if (self->event_sink_ != nullptr) {
      for (size_t e = 0; e < r->n_events; ++e) {
        const Natcd__V1__KeyValue* kv = r->events[e]->kv;
        if (kv != nullptr) self->event_sink_->OnEvent(kv->value.data, kv->value.len);
      }
    }
    // Heartbeats are acknowledged: they keep the watcher a member.
    if (r->n_events == 0 && !r->canceled) {
      self->Ack(member->watch_id, r->group_seq, false, r->group_id);
    }
  }
  natcd__v1__watch_response__free_unpacked(r, nullptr);
}

Target::WatchGaps NatcdTarget::WatchGapsSeen() const {
  return {group_gaps_.load(), group_messages_missed_.load()};
}

bool NatcdTarget::OpenWatchers(int watchers, EventSink* sink) {
  event_sink_ = sink;
  group_gaps_ = 0;
  group_messages_missed_ = 0;
  char* inbox = nullptr;
  if (natsInbox_Create(&inbox) != NATS_OK) return false;
  watch_inbox_ = std::string(inbox) + ".";
  free(inbox);
  if (watch_groups_) {
    char url[512];
    if (natsConnection_GetConnectedUrl(nc_, url, sizeof url) != NATS_OK) return false;
    group_nc_ = ConnectNats(url, /*global_delivery=*/true);
    if (group_nc_ == nullptr) return false;
    members_.clear();
    for (int w = 0; w < watchers; ++w) {
      members_.push_back(std::make_unique<GroupMember>());
      members_.back()->self = this;
    }
    joined_ = 0;
  }
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
    create.group = watch_groups_;
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
  if (!watch_groups_) return true;
  // Measure the group path: every watcher on its group before the load.
  for (int waited_ms = 0; joined_.load() < watchers; waited_ms += 10) {
    if (waited_ms >= 60'000) {
      fprintf(stderr, "natcd-bench: %d of %d watchers joined their group\n", joined_.load(),
              watchers);
      return false;
    }
    nats_Sleep(10);
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
  for (auto& member : members_) {
    if (member->sub == nullptr) continue;
    (void)natsSubscription_Unsubscribe(member->sub);
    natsSubscription_Destroy(member->sub);
    member->sub = nullptr;
  }
  if (group_nc_ != nullptr) {
    natsConnection_Destroy(group_nc_);  // no callback runs after it
    group_nc_ = nullptr;
  }
  members_.clear();
  event_sink_ = nullptr;
}

}  // namespace natcd::bench
