// WatchRegistry: the watches of every gRPC Watch stream, on the member's
// engine (its WatchHub), and their delivery: the gRPC front end as the
// member sees it (server::FrontEnd).
//
// etcd's watch semantics on a stream: watch IDs are the stream's own
// (client-chosen, or assigned from 0 up, skipping those in use); a create
// is answered `created` with the current revision; an error answers
// created + canceled with the reason and watch ID -1; a cancel of a watch
// is answered `canceled`; a progress request (etcd 3.5's broadcast) is
// answered once with watch ID -1 and a revision every watch of the stream
// has delivered up to; progress_notify watches get the periodic progress
// with their own ID. A watch canceled by the hub (compaction, a slow
// consumer, a snapshot replacing the database, shutdown) gets a canceled
// response with its reason and compact revision.
//
// The front end's own watches: the lock and election services wait on a
// key with a watch whose messages go to a function instead of a stream.
//
// Encode once: identical watches synced together (same range, filters,
// prev_kv and fragment setting, on any stream) take the very same batch of
// shared events from the hub in a delivery round; the batch is encoded
// once, with watch ID 0, and each stream queues those bytes (shared slices,
// not copies) with its own watch_id spliced in after the header, in the
// place protobuf puts it. The cost per watch is then a queue entry, not an
// encoding of every event.
//
// Flow: a stream whose queue of unwritten responses is over
// stream_bytes_max is not polled until it drains; its watches' events wait
// in the hub; a watch whose hub queue fills falls behind and catches up from
// history once the stream drains, as etcd's slow watchers do (never
// canceled for being slow). Writes and other streams never wait for it.
//
// Thread safety: member thread only (the FrontEnd hooks, and the tasks
// WatchCall queues with Member::RunOnMemberThread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "adapters/grpc/call_context.h"
#include "adapters/grpc/stream_call.h"
#include "adapters/nats/natcd.pb-c.h"
#include "natcd/engine.h"
#include "natcd/mutex.h"
#include "natcd/watch_hub.h"
#include "server/front_end.h"

namespace natcd::etcd_api {

class WatchRegistry final : public server::FrontEnd {
 public:
  WatchRegistry(const CallContext* calls, size_t stream_bytes_max);
  ~WatchRegistry() override;
  WatchRegistry(const WatchRegistry&) = delete;
  WatchRegistry& operator=(const WatchRegistry&) = delete;

  // From a stream's requests.
  // token: the stream's auth token (etcd checks READ on the range when
  // auth is enabled, and refuses with "etcdserver: permission denied").
  void Create(std::shared_ptr<StreamCall> stream, const Natcd__V1__WatchCreateRequest& request,
              const std::string& token);
  void Cancel(StreamCall* stream, int64_t watch_id);
  void RequestProgress(StreamCall* stream);
  // The stream is over: its watches go.
  void StreamEnded(StreamCall* stream);

  // A watch of the front end itself: every message (events, progress, the
  // cancel that ends it) goes to `on_message` after a turn, until it
  // returns false or CancelOwn. Errors as WatchHub::Create's; Unavailable
  // while the member has no engine.
  using OwnWatchHandler = std::function<bool(const WatchMessage& message)>;
  Result<WatchId> WatchOwn(const WatchOptions& options, OwnWatchHandler on_message);
  void CancelOwn(WatchId id);

  // server::FrontEnd
  void Attach(Engine* engine) override;
  void Detach() override;
  void AfterTurn() override;
  void Tick() override {}
  void LeadershipChanged(bool) override {}

 private:
  struct Stream {
    std::shared_ptr<StreamCall> call;
    std::map<int64_t, WatchId> watches;  // the stream's watch ID -> the hub's
    int64_t next_id = 0;
    // A progress request waits for these watches' bookmarks.
    std::set<WatchId> progress_pending;
    int64_t progress_revision = 0;  // the smallest bookmark so far
    bool progress_requested = false;
  };
  struct Watch {
    Stream* stream = nullptr;
    int64_t id = 0;  // on its stream
    bool fragment = false;
  };
  // Sends what the hub has for the watches, streams within their bound
  // (all of it when ignore_bound).
  void Deliver(bool ignore_bound) REQUIRES(on_member_thread_);
  // Sends one hub message of a watch; false when it was the last.
  bool Send(WatchId hub_id, Watch& watch, WatchMessage& message) REQUIRES(on_member_thread_);
  void SendEvents(Watch& watch, const WatchMessage& message) REQUIRES(on_member_thread_);
  // A hub batch's responses (fragments when asked for), as bytes with
  // watch ID 0 and where the header ends: encoded on the first request of a
  // delivery round, shared by every watch that got the same batch.
  struct EncodedResponse {
    grpc::Slice bytes;
    size_t header_end = 0;
  };
  const std::vector<EncodedResponse>& Encoded(const WatchMessage& message, bool fragment)
      REQUIRES(on_member_thread_);
  void Forget(WatchId hub_id) REQUIRES(on_member_thread_);
  void DeliverOwn(WatchId hub_id) REQUIRES(on_member_thread_);
  void MaybeAnswerProgress(Stream& stream) REQUIRES(on_member_thread_);
  void SendControl(Stream& stream, int64_t watch_id, int64_t revision, bool created, bool canceled,
                   const char* reason, int64_t compact_revision) REQUIRES(on_member_thread_);
  nats::HeaderInfo Header() const;

  const CallContext* const calls_;
  const size_t stream_bytes_max_;
  ThreadRole on_member_thread_;
  Engine* engine_ GUARDED_BY(on_member_thread_) = nullptr;
  std::map<StreamCall*, Stream> streams_ GUARDED_BY(on_member_thread_);
  std::unordered_map<WatchId, Watch> watches_ GUARDED_BY(on_member_thread_);
  std::unordered_map<WatchId, OwnWatchHandler> own_ GUARDED_BY(on_member_thread_);
  // The current delivery round's encoded batches, by their events (the
  // hub's shared Event objects, so equal pointers are equal events), the
  // revision, prev_kv and fragment.
  using BatchKey = std::tuple<std::vector<const Event*>, int64_t, bool, bool>;
  std::map<BatchKey, std::vector<EncodedResponse>> encoded_ GUARDED_BY(on_member_thread_);
  // Their events, held for the round so that no address is reused in it.
  std::vector<EventRef> encoded_events_ GUARDED_BY(on_member_thread_);
};

}  // namespace natcd::etcd_api
