// The long-lived calls (Watch and LeaseKeepAlive streams) that are open, so
// that a server stopping ends them at once, with etcd's "server stopped",
// instead of waiting out grpc++'s shutdown deadline for streams that never
// end by themselves. Unary calls are not tracked: the member answers them.
//
// Thread safety: thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "adapters/grpc/call_context.h"
#include "adapters/grpc/stream_call.h"
#include "natcd/mutex.h"

namespace natcd::etcd_api {

class LiveCalls {
 public:
  void Add(const std::shared_ptr<StreamCall>& call);
  // Ends every call still open with `status`; later ones are ended as they
  // are added.
  void EndAll(const grpc::Status& status);

 private:
  Mutex mu_;
  std::vector<std::weak_ptr<StreamCall>> calls_ GUARDED_BY(mu_);
  bool ended_ GUARDED_BY(mu_) = false;
  grpc::Status status_ GUARDED_BY(mu_);
};

// A long-lived call just started: ended when the server stops, and when it
// requires a leader, by the leader monitor.
void TrackLongLived(const CallContext& calls, const std::shared_ptr<StreamCall>& call);

}  // namespace natcd::etcd_api
