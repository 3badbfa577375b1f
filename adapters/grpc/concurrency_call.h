// A call of etcd's server-side concurrency services: v3lockpb.Lock (Lock,
// Unlock) and v3electionpb.Election (Campaign, Proclaim, Leader, Observe,
// Resign). Each runs the recipe etcd's server runs with its Go client
// (clientv3/concurrency), as KV requests through the member and watches on
// its engine:
//
// - a contender's key is "<name>/<lease ID in hex>", put with the lease if
//   absent (a second Lock or Campaign on the same lease reuses it); the
//   contender whose key has the smallest create revision holds the lock or
//   leads;
// - Lock and Campaign answer once every key under "<name>/" created before
//   theirs is deleted: they read the newest such key, watch it until it is
//   deleted, and read again;
// - Lock answers "session expired" when its own key is gone by then (its
//   lease expired while it waited); Campaign's value is proclaimed when its
//   key already held another;
// - Proclaim and Resign act only while the leader key still has its create
//   revision ("election: not leader" for Proclaim, nothing for Resign);
//   Leader reads the first key ("election: no leader");
// - Observe streams the leader's key: the current leader (or the first one
//   elected), each proclamation, then the next leader when it resigns.
//
// A client that goes away while Lock or Campaign waits gives its key up
// (Lock deletes it, Campaign resigns), as etcd's do. The recipes' own
// errors are UNKNOWN with etcd's text (etcd's server returns them as plain
// errors); the member's are etcd's gRPC statuses.
//
// Thread safety: as StreamCall; the recipe runs on the member thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "adapters/grpc/call_context.h"
#include "adapters/grpc/etcd_methods.h"
#include "adapters/grpc/member_call.h"
#include "adapters/grpc/message_decoder.h"
#include "adapters/grpc/stream_call.h"
#include "adapters/nats/codec/convert.h"
#include "natcd/mutex.h"
#include "natcd/watch_hub.h"

namespace natcd::etcd_api {

class ConcurrencyCall final : public StreamCall {
 public:
  // Starts the call (CreateReactor).
  static grpc::ServerGenericBidiReactor* Start(grpc::GenericCallbackServerContext* context,
                                               const MethodInfo* method, const CallContext* calls);

 private:
  ConcurrencyCall(grpc::GenericCallbackServerContext* context, const MethodInfo* method,
                  const CallContext* calls)
      : StreamCall(context), method_(method), calls_(calls) {}
  bool OnMessage(std::string bytes) override;
  void OnReadsEnded() override;
  void OnCallEnded() override;

  std::shared_ptr<ConcurrencyCall> self();

  // ---- the recipes (member thread) ----
  void Run(const ProtobufCMessage& request) REQUIRES(on_member_thread_);
  void Lock(const std::string& name, int64_t lease) REQUIRES(on_member_thread_);
  void Campaign(const std::string& name, int64_t lease, const std::string& value)
      REQUIRES(on_member_thread_);
  // Proclaim and Resign act on the leader key in key_ (name_, key_revision_, lease_).
  void Proclaim(const std::string& value) REQUIRES(on_member_thread_);
  void Resign() REQUIRES(on_member_thread_);
  // Leader and Observe read the election prefix_.
  void Leader() REQUIRES(on_member_thread_);
  void Observe() REQUIRES(on_member_thread_);
  void ObserveLeader(const KeyValue& leader, int64_t from_revision) REQUIRES(on_member_thread_);
  // The response header etcd's messages carry.
  Natcd__V1__ResponseHeader* Header(const ResponseHeader& header, uint64_t raft_term,
                                    nats::ProtoArena* arena) const;
  std::string LeaderMessage(const ResponseHeader& header, const KeyValue& kv,
                            uint64_t raft_term) const;

  // Calls `done` once no key under prefix_ has a create revision at or
  // below max_create_revision (with the header of the read that found
  // none), or ends the call with the error.
  using Waited = std::function<void(const ResponseHeader& header, uint64_t raft_term)>;
  void WaitDeletes(int64_t max_create_revision, Waited done) REQUIRES(on_member_thread_);
  // Watches [key, range_end) from `revision`; `on_message` as
  // WatchRegistry::WatchOwn's, not called once the call is over. Ends the
  // call when the watch cannot be made.
  void Watch(const std::string& key, const std::string& range_end, int64_t revision,
             std::function<bool(const WatchMessage&)> on_message) REQUIRES(on_member_thread_);

  // Asks the member; `then` runs on the member thread with a success, or
  // the call ends with the error. Nothing runs once the call is over, but
  // for the request that makes_key: its success runs after the caller left,
  // so that the key it made is given up.
  using Then = std::function<void(const server::Response& response, uint64_t raft_term)>;
  void Ask(server::RequestPayload payload, Then then, bool makes_key = false)
      REQUIRES(on_member_thread_);
  // The last message: the client holds the key now.
  void Answer(std::string bytes) REQUIRES(on_member_thread_);
  // Ends the call with `status`, giving up the key.
  void Close(grpc::Status status) REQUIRES(on_member_thread_);
  // The client went away: give up the key.
  void Abandon() REQUIRES(on_member_thread_);
  void GiveUpKey() REQUIRES(on_member_thread_);
  bool over() const REQUIRES(on_member_thread_) { return answered_ || abandoned_; }

  const MethodInfo* const method_;
  const CallContext* const calls_;
  bool received_ = false;  // grpc++ thread only

  ThreadRole on_member_thread_;
  bool answered_ GUARDED_BY(on_member_thread_) = false;
  bool abandoned_ GUARDED_BY(on_member_thread_) = false;
  std::optional<WatchId> watch_ GUARDED_BY(on_member_thread_);
  std::string name_ GUARDED_BY(on_member_thread_);
  std::string prefix_ GUARDED_BY(on_member_thread_);  // name_ + "/"
  // The contender's key, its create revision and lease, once made (Lock,
  // Campaign): what Abandon gives up.
  std::string key_ GUARDED_BY(on_member_thread_);
  int64_t key_revision_ GUARDED_BY(on_member_thread_) = 0;
  int64_t lease_ GUARDED_BY(on_member_thread_) = 0;
  bool holds_key_ GUARDED_BY(on_member_thread_) = false;
};

}  // namespace natcd::etcd_api
