#include "adapters/grpc/concurrency_call.h"

#include <cinttypes>
#include <cstdio>
#include <utility>

#include "adapters/grpc/etcd_codec.h"
#include "adapters/grpc/etcd_concurrency.pb-c.h"
#include "adapters/grpc/etcd_error.h"
#include "adapters/grpc/live_calls.h"
#include "adapters/grpc/watch_registry.h"
#include "adapters/nats/codec/convert.h"
#include "natcd/key_range.h"

namespace natcd::etcd_api {
namespace {

// etcd's clientv3/concurrency errors, which its server returns as they are
// (gRPC UNKNOWN with the text).
const char kNoLeader[] = "election: no leader";
const char kNotLeader[] = "election: not leader";
const char kSessionExpired[] = "session expired";
const char kMissingLeaderKey[] = "\"leader\" field must be provided";

// A session etcd's server makes for a Lock or Campaign without a lease
// (concurrency.NewSession's default TTL), never kept alive.
constexpr int64_t kSessionTtlSeconds = 60;

grpc::Status RecipeError(const char* text) { return grpc::Status(grpc::StatusCode::UNKNOWN, text); }

std::string Bytes(const ProtobufCBinaryData& data) {
  return std::string(reinterpret_cast<const char*>(data.data), data.len);
}

ProtobufCBinaryData BinaryOf(const std::string& s) {
  return ProtobufCBinaryData{s.size(), reinterpret_cast<uint8_t*>(const_cast<char*>(s.data()))};
}

std::string LeaseHex(int64_t lease) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIx64, static_cast<uint64_t>(lease));
  return buf;
}

// The key under prefix with the smallest (first) or largest create revision.
RangeRequest ByCreate(const std::string& prefix, SortOrder order) {
  RangeRequest r;
  r.key = prefix;
  r.range_end = PrefixRangeEnd(prefix);
  r.sort_target = SortTarget::kCreate;
  r.sort_order = order;
  r.limit = 1;
  return r;
}

Compare CreatedAt(const std::string& key, int64_t revision) {
  Compare c;
  c.target = Compare::Target::kCreate;
  c.result = Compare::Result::kEqual;
  c.key = key;
  c.create_revision = revision;
  return c;
}

const RangeResponse& RangeOf(const TxnResponse& txn, size_t i) {
  return std::get<RangeResponse>(txn.responses.at(i).response);
}

}  // namespace

grpc::ServerGenericBidiReactor* ConcurrencyCall::Start(grpc::GenericCallbackServerContext* context,
                                                       const MethodInfo* method,
                                                       const CallContext* calls) {
  std::shared_ptr<ConcurrencyCall> call(new ConcurrencyCall(context, method, calls));
  call->Begin();
  // Lock, Campaign and Observe wait as long as it takes: a stopping server
  // ends them.
  TrackLongLived(*calls, call);
  return call.get();
}

Natcd__V1__ResponseHeader* ConcurrencyCall::Header(const ResponseHeader& header, uint64_t raft_term,
                                                   nats::ProtoArena* arena) const {
  nats::HeaderInfo info = calls_->response.header;
  info.raft_term = raft_term;
  return nats::ToProto(header, info, arena);
}

std::shared_ptr<ConcurrencyCall> ConcurrencyCall::self() {
  return std::static_pointer_cast<ConcurrencyCall>(shared_from_this());
}

bool ConcurrencyCall::OnMessage(std::string bytes) {
  received_ = true;
  if (bytes.size() > calls_->request_bytes_max) {
    End(ToGrpcStatus(Status::TooLarge("ErrRequestTooLarge", "etcdserver: request is too large")));
    return false;
  }
  grpc::Status error;
  Message message = DecodeMessage(method_->request, bytes, &error);
  if (message == nullptr) {
    End(error);
    return false;
  }
  auto request = std::make_shared<Message>(std::move(message));
  calls_->member->RunOnMemberThread([call = self(), request](Engine&) {
    call->on_member_thread_.AssertHeld();
    if (!call->over()) call->Run(**request);
  });
  return false;  // the one message
}

void ConcurrencyCall::OnReadsEnded() {
  if (!received_) End(grpc::Status(grpc::StatusCode::INTERNAL, "no request message"));
}

void ConcurrencyCall::OnCallEnded() {
  calls_->member->RunOnMemberThread([call = self()](Engine&) {
    call->on_member_thread_.AssertHeld();
    call->Abandon();
  });
}

void ConcurrencyCall::Run(const ProtobufCMessage& message) {
  switch (method_->method) {
    case Method::kLock: {
      const auto& in = reinterpret_cast<const Natcd__Grpc__LockRequest&>(message);
      Lock(Bytes(in.name), in.lease);
      return;
    }
    case Method::kUnlock: {
      const auto& in = reinterpret_cast<const Natcd__Grpc__UnlockRequest&>(message);
      DeleteRangeRequest del;
      del.key = Bytes(in.key);
      Ask(std::move(del), [this](const server::Response& r, uint64_t term) {
        on_member_thread_.AssertHeld();
        nats::ProtoArena arena;
        Natcd__Grpc__UnlockResponse out;
        natcd__grpc__unlock_response__init(&out);
        out.header = Header(std::get<DeleteRangeResponse>(r).header, term, &arena);
        Answer(Pack(out.base));
      });
      return;
    }
    case Method::kCampaign: {
      const auto& in = reinterpret_cast<const Natcd__Grpc__CampaignRequest&>(message);
      Campaign(Bytes(in.name), in.lease, Bytes(in.value));
      return;
    }
    case Method::kProclaim:
    case Method::kResign: {
      const Natcd__Grpc__LeaderKey* leader =
          method_->method == Method::kProclaim
              ? reinterpret_cast<const Natcd__Grpc__ProclaimRequest&>(message).leader
              : reinterpret_cast<const Natcd__Grpc__ResignRequest&>(message).leader;
      if (leader == nullptr) {
        Close(RecipeError(kMissingLeaderKey));
        return;
      }
      name_ = Bytes(leader->name);
      key_ = Bytes(leader->key);
      key_revision_ = leader->rev;
      lease_ = leader->lease;
      if (method_->method == Method::kResign) {
        Resign();
      } else {
        const auto& in = reinterpret_cast<const Natcd__Grpc__ProclaimRequest&>(message);
        Proclaim(Bytes(in.value));
      }
      return;
    }
    case Method::kLeader:
    case Method::kObserve: {
      const auto& in = reinterpret_cast<const Natcd__Grpc__LeaderRequest&>(message);
      name_ = Bytes(in.name);
      prefix_ = name_ + "/";
      if (method_->method == Method::kLeader) {
        Leader();
      } else {
        Observe();
      }
      return;
    }
    default:
      Close(grpc::Status(grpc::StatusCode::INTERNAL, "not a concurrency method"));
  }
}

// ---- v3lock ----

void ConcurrencyCall::Lock(const std::string& name, int64_t lease) {
  if (lease == 0) {
    LeaseGrantRequest grant;
    grant.ttl = kSessionTtlSeconds;
    Ask(grant, [this, name](const server::Response& r, uint64_t) {
      on_member_thread_.AssertHeld();
      Lock(name, std::get<LeaseGrantResponse>(r).id);
    });
    return;
  }
  name_ = name;
  prefix_ = name + "/";
  lease_ = lease;
  key_ = prefix_ + LeaseHex(lease);
  TxnRequest txn;
  txn.compare.push_back(CreatedAt(key_, 0));
  PutRequest put;
  put.key = key_;
  put.lease = lease;
  RangeRequest mine;
  mine.key = key_;
  txn.success = {RequestOp{put}, RequestOp{ByCreate(prefix_, SortOrder::kAscend)}};
  txn.failure = {RequestOp{mine}, RequestOp{ByCreate(prefix_, SortOrder::kAscend)}};
  Ask(
      std::move(txn),
      [this](const server::Response& r, uint64_t term) {
        on_member_thread_.AssertHeld();
        const auto& t = std::get<TxnResponse>(r);
        key_revision_ = t.header.revision;
        if (!t.succeeded) {
          const RangeResponse& mine = RangeOf(t, 0);
          if (mine.kvs.empty()) {
            Close(grpc::Status(grpc::StatusCode::INTERNAL, "lock key vanished"));
            return;
          }
          key_revision_ = mine.kvs[0].create_revision;
        }
        holds_key_ = true;
        if (abandoned_) {
          GiveUpKey();
          return;
        }
        auto answer = [this](const ResponseHeader& header, uint64_t raft_term) {
          on_member_thread_.AssertHeld();
          nats::ProtoArena arena;
          Natcd__Grpc__LockResponse out;
          natcd__grpc__lock_response__init(&out);
          out.header = Header(header, raft_term, &arena);
          out.key = BinaryOf(key_);
          Answer(Pack(out.base));
        };
        const RangeResponse& owner = RangeOf(t, 1);
        if (owner.kvs.empty() || owner.kvs[0].create_revision == key_revision_) {
          answer(t.header, term);
          return;
        }
        WaitDeletes(key_revision_ - 1, [this, answer](const ResponseHeader&, uint64_t) {
          on_member_thread_.AssertHeld();
          // The key may have gone with its lease while it waited.
          RangeRequest mine;
          mine.key = key_;
          Ask(std::move(mine), [this, answer](const server::Response& r, uint64_t raft_term) {
            on_member_thread_.AssertHeld();
            const auto& range = std::get<RangeResponse>(r);
            if (range.kvs.empty()) {
              holds_key_ = false;
              Close(RecipeError(kSessionExpired));
              return;
            }
            answer(range.header, raft_term);
          });
        });
      },
      /*makes_key=*/true);
}

// ---- v3election ----

void ConcurrencyCall::Campaign(const std::string& name, int64_t lease, const std::string& value) {
  if (lease == 0) {
    LeaseGrantRequest grant;
    grant.ttl = kSessionTtlSeconds;
    Ask(grant, [this, name, value](const server::Response& r, uint64_t) {
      on_member_thread_.AssertHeld();
      Campaign(name, std::get<LeaseGrantResponse>(r).id, value);
    });
    return;
  }
  name_ = name;
  prefix_ = name + "/";
  lease_ = lease;
  key_ = prefix_ + LeaseHex(lease);
  TxnRequest txn;
  txn.compare.push_back(CreatedAt(key_, 0));
  PutRequest put;
  put.key = key_;
  put.value = value;
  put.lease = lease;
  RangeRequest mine;
  mine.key = key_;
  txn.success = {RequestOp{put}};
  txn.failure = {RequestOp{mine}};
  Ask(
      std::move(txn),
      [this, value](const server::Response& r, uint64_t term) {
        on_member_thread_.AssertHeld();
        const auto& t = std::get<TxnResponse>(r);
        key_revision_ = t.header.revision;
        bool proclaim = false;
        if (!t.succeeded) {
          const RangeResponse& existing = RangeOf(t, 0);
          if (existing.kvs.empty()) {
            Close(grpc::Status(grpc::StatusCode::INTERNAL, "election key vanished"));
            return;
          }
          key_revision_ = existing.kvs[0].create_revision;
          proclaim = existing.kvs[0].value != value;
        }
        holds_key_ = true;
        if (abandoned_) {
          GiveUpKey();
          return;
        }
        // Answered with the campaign's own header, as etcd's.
        const ResponseHeader header = t.header;
        auto elected = [this, header, term] {
          on_member_thread_.AssertHeld();
          WaitDeletes(key_revision_ - 1, [this, header, term](const ResponseHeader&, uint64_t) {
            on_member_thread_.AssertHeld();
            nats::ProtoArena arena;
            Natcd__Grpc__CampaignResponse out;
            natcd__grpc__campaign_response__init(&out);
            out.header = Header(header, term, &arena);
            Natcd__Grpc__LeaderKey leader;
            natcd__grpc__leader_key__init(&leader);
            leader.name = BinaryOf(name_);
            leader.key = BinaryOf(key_);
            leader.rev = key_revision_;
            leader.lease = lease_;
            out.leader = &leader;
            Answer(Pack(out.base));
          });
        };
        if (!proclaim) {
          elected();
          return;
        }
        // The key is this lease's from an earlier campaign with another value.
        TxnRequest update;
        update.compare.push_back(CreatedAt(key_, key_revision_));
        PutRequest put;
        put.key = key_;
        put.value = value;
        put.lease = lease_;
        update.success = {RequestOp{put}};
        Ask(std::move(update), [this, elected](const server::Response& r, uint64_t) {
          on_member_thread_.AssertHeld();
          if (!std::get<TxnResponse>(r).succeeded) {
            Close(RecipeError(kNotLeader));
            return;
          }
          elected();
        });
      },
      /*makes_key=*/true);
}

void ConcurrencyCall::Proclaim(const std::string& value) {
  TxnRequest txn;
  txn.compare.push_back(CreatedAt(key_, key_revision_));
  PutRequest put;
  put.key = key_;
  put.value = value;
  put.lease = lease_;
  txn.success = {RequestOp{put}};
  Ask(std::move(txn), [this](const server::Response& r, uint64_t term) {
    on_member_thread_.AssertHeld();
    const auto& t = std::get<TxnResponse>(r);
    if (!t.succeeded) {
      Close(RecipeError(kNotLeader));
      return;
    }
    nats::ProtoArena arena;
    Natcd__Grpc__ProclaimResponse out;
    natcd__grpc__proclaim_response__init(&out);
    out.header = Header(t.header, term, &arena);
    Answer(Pack(out.base));
  });
}

void ConcurrencyCall::Resign() {
  TxnRequest txn;
  txn.compare.push_back(CreatedAt(key_, key_revision_));
  DeleteRangeRequest del;
  del.key = key_;
  txn.success = {RequestOp{del}};
  Ask(std::move(txn), [this](const server::Response& r, uint64_t term) {
    on_member_thread_.AssertHeld();
    nats::ProtoArena arena;
    Natcd__Grpc__ResignResponse out;
    natcd__grpc__resign_response__init(&out);
    out.header = Header(std::get<TxnResponse>(r).header, term, &arena);
    Answer(Pack(out.base));
  });
}

std::string ConcurrencyCall::LeaderMessage(const ResponseHeader& header, const KeyValue& kv,
                                           uint64_t raft_term) const {
  nats::ProtoArena arena;
  Natcd__Grpc__LeaderResponse out;
  natcd__grpc__leader_response__init(&out);
  out.header = Header(header, raft_term, &arena);
  out.kv = nats::ToProto(kv, &arena);
  return Pack(out.base);
}

void ConcurrencyCall::Leader() {
  Ask(ByCreate(prefix_, SortOrder::kAscend), [this](const server::Response& r, uint64_t term) {
    on_member_thread_.AssertHeld();
    const auto& range = std::get<RangeResponse>(r);
    if (range.kvs.empty()) {
      Close(RecipeError(kNoLeader));
      return;
    }
    Answer(LeaderMessage(range.header, range.kvs[0], term));
  });
}

void ConcurrencyCall::Observe() {
  Ask(ByCreate(prefix_, SortOrder::kAscend), [this](const server::Response& r, uint64_t term) {
    on_member_thread_.AssertHeld();
    const auto& range = std::get<RangeResponse>(r);
    if (!range.kvs.empty()) {
      Send(LeaderMessage(range.header, range.kvs[0], term));
      ObserveLeader(range.kvs[0], range.header.revision + 1);
      return;
    }
    // No leader yet: the first key put under the prefix is.
    Watch(prefix_, PrefixRangeEnd(prefix_), range.header.revision,
          [this](const WatchMessage& message) {
            on_member_thread_.AssertHeld();
            for (const EventRef& event : message.events) {
              if (event->type != Event::Type::kPut) continue;
              ResponseHeader header;
              header.revision = event->kv.mod_revision;
              Send(LeaderMessage(header, event->kv, calls_->member->raft_term()));
              watch_.reset();
              ObserveLeader(event->kv, event->kv.mod_revision + 1);
              return false;
            }
            return true;
          });
  });
}

void ConcurrencyCall::ObserveLeader(const KeyValue& leader, int64_t from_revision) {
  Watch(leader.key, "", from_revision, [this](const WatchMessage& message) {
    on_member_thread_.AssertHeld();
    for (const EventRef& event : message.events) {
      if (event->type == Event::Type::kDelete) {
        // The leader resigned or its lease ended: the next one.
        watch_.reset();
        Observe();
        return false;
      }
      ResponseHeader header;
      header.revision = message.revision;
      Send(LeaderMessage(header, event->kv, calls_->member->raft_term()));
    }
    return true;
  });
}

// ---- the steps ----

void ConcurrencyCall::WaitDeletes(int64_t max_create_revision, Waited done) {
  RangeRequest newest = ByCreate(prefix_, SortOrder::kDescend);
  // (0 would mean no bound: nothing is created at or below revision 0.)
  newest.max_create_revision = max_create_revision > 0 ? max_create_revision : -1;
  Ask(std::move(newest),
      [this, max_create_revision, done](const server::Response& r, uint64_t term) {
        on_member_thread_.AssertHeld();
        const auto& range = std::get<RangeResponse>(r);
        if (range.kvs.empty() || max_create_revision <= 0) {
          done(range.header, term);
          return;
        }
        Watch(range.kvs[0].key, "", range.header.revision,
              [this, max_create_revision, done](const WatchMessage& message) {
                on_member_thread_.AssertHeld();
                bool deleted = message.canceled;  // (compaction, a new database): read again
                for (const EventRef& event : message.events) {
                  deleted = deleted || event->type == Event::Type::kDelete;
                }
                if (!deleted) return true;
                watch_.reset();
                WaitDeletes(max_create_revision, done);
                return false;
              });
      });
}

void ConcurrencyCall::Watch(const std::string& key, const std::string& range_end, int64_t revision,
                            std::function<bool(const WatchMessage&)> on_message) {
  WatchOptions options;
  options.key = key;
  options.range_end = range_end;
  options.start_revision = revision;
  Result<WatchId> id = calls_->watches->WatchOwn(options, [call = self(), on_message](
                                                              const WatchMessage& message) {
    call->on_member_thread_.AssertHeld();
    if (message.canceled) call->watch_.reset();
    if (call->over()) return false;
    if (message.canceled && message.events.empty() && call->method_->method == Method::kObserve) {
      // etcd's Observe ends when its watch does.
      call->Close(grpc::Status::OK);
      return false;
    }
    return on_message(message);
  });
  if (!id.ok()) {
    Close(ToGrpcStatus(id.status()));
    return;
  }
  watch_ = *id;
}

void ConcurrencyCall::Ask(server::RequestPayload payload, Then then, bool makes_key) {
  AskMember(calls_, std::move(payload),
            [call = self(), then, makes_key](const Result<server::Response>& r, uint64_t term) {
              call->on_member_thread_.AssertHeld();
              // A key made for a caller that left meanwhile is given up.
              if (call->answered_ || (call->abandoned_ && !(makes_key && r.ok()))) return;
              if (!r.ok()) {
                call->Close(ToGrpcStatus(r.status()));
                return;
              }
              then(r.value(), term);
            });
}

void ConcurrencyCall::Answer(std::string bytes) {
  answered_ = true;
  holds_key_ = false;  // the client's now
  if (watch_) calls_->watches->CancelOwn(*watch_);
  watch_.reset();
  SendLast(std::move(bytes));
}

void ConcurrencyCall::Close(grpc::Status status) {
  if (over()) return;
  answered_ = true;
  GiveUpKey();
  End(std::move(status));
}

void ConcurrencyCall::Abandon() {
  if (over()) return;
  abandoned_ = true;
  GiveUpKey();
}

void ConcurrencyCall::GiveUpKey() {
  if (watch_) calls_->watches->CancelOwn(*watch_);
  watch_.reset();
  if (!holds_key_) return;
  holds_key_ = false;
  // Lock deletes its key (etcd's Unlock); Campaign resigns, if it still
  // holds the key it made.
  server::RequestPayload release;
  if (method_->method == Method::kLock) {
    DeleteRangeRequest del;
    del.key = key_;
    release = std::move(del);
  } else {
    TxnRequest txn;
    txn.compare.push_back(CreatedAt(key_, key_revision_));
    DeleteRangeRequest del;
    del.key = key_;
    txn.success = {RequestOp{del}};
    release = std::move(txn);
  }
  AskMember(calls_, std::move(release), [](const Result<server::Response>&, uint64_t) {});
}

}  // namespace natcd::etcd_api
