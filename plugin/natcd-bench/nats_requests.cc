#include "plugin/natcd-bench/nats_requests.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace natcd::bench {

bool NatsRequests::Begin(natsConnection* nc, int slots, ReplySink* sink, Judge judge) {
  nc_ = nc;
  sink_ = sink;
  judge_ = std::move(judge);
  char* inbox = nullptr;
  if (natsInbox_Create(&inbox) != NATS_OK) return false;
  inbox_ = std::string(inbox) + ".";
  free(inbox);
  reply_subjects_.clear();
  for (int s = 0; s < slots; ++s) reply_subjects_.push_back(inbox_ + std::to_string(s));
  if (natsConnection_Subscribe(&sub_, nc, (inbox_ + "*").c_str(), &NatsRequests::OnReply, this) !=
      NATS_OK) {
    return false;
  }
  natsSubscription_SetPendingLimits(sub_, -1, -1);
  return natsConnection_Flush(nc) == NATS_OK;
}

void NatsRequests::Send(int slot, const char* subject, const void* data, int len) {
  if (natsConnection_PublishRequest(nc_, subject, reply_subjects_[slot].c_str(), data, len) !=
      NATS_OK) {
    sink_->OnReply(slot, false);
  }
}

void NatsRequests::End() {
  if (sub_ == nullptr) return;
  natsSubscription_Drain(sub_);
  natsSubscription_WaitForDrainCompletion(sub_, 5'000);
  natsSubscription_Destroy(sub_);
  sub_ = nullptr;
}

void NatsRequests::OnReply(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* self = static_cast<NatsRequests*>(closure);
  const int slot = atoi(natsMsg_GetSubject(msg) + self->inbox_.size());
  const bool ok =
      slot >= 0 && slot < static_cast<int>(self->reply_subjects_.size()) && self->judge_(slot, msg);
  natsMsg_Destroy(msg);
  if (slot >= 0 && slot < static_cast<int>(self->reply_subjects_.size())) {
    self->sink_->OnReply(slot, ok);
  }
}

bool NoServiceError(natsMsg* reply) {
  const char* value = nullptr;
  if (natsMsgHeader_Get(reply, "Nats-Service-Error-Code", &value) == NATS_OK) return false;
  // The server's own answer when nothing serves the subject ("no
  // responders"): without this, a run against the wrong prefix or a dead
  // service counted these instant replies as successes.
  return !(natsMsgHeader_Get(reply, "Status", &value) == NATS_OK && value != nullptr &&
           strcmp(value, "503") == 0);
}

natsConnection* ConnectNats(const std::string& url, bool global_delivery) {
  natsOptions* opts = nullptr;
  natsOptions_Create(&opts);
  natsOptions_SetURL(opts, url.c_str());
  // Requests go out as they are made, as a latency-sensitive client sends.
  natsOptions_SetSendAsap(opts, true);
  natsOptions_SetMaxPendingMsgs(opts, 1'000'000);
  // Thousands of watcher subscriptions share one delivery thread instead
  // of one thread each.
  if (global_delivery) natsOptions_UseGlobalMessageDelivery(opts, true);
  natsConnection* nc = nullptr;
  const natsStatus s = natsConnection_Connect(&nc, opts);
  natsOptions_Destroy(opts);
  if (s != NATS_OK) {
    fprintf(stderr, "natcd-bench: connect %s: %s\n", url.c_str(), natsStatus_GetText(s));
    return nullptr;
  }
  return nc;
}

}  // namespace natcd::bench
