// Conversion between natcd.proto (protobuf-c structs) and the engine's C++
// values. Decoding copies out of the unpacked message (which the caller
// frees); encoding builds protobuf-c structs that point into the C++ values
// and into a ProtoArena, so nothing is copied twice: the arena and the
// values must outlive the pack.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "adapters/nats/natcd.pb-c.h"
#include "natcd/engine.h"
#include "natcd/status.h"
#include "natcd/types.h"
#include "natcd/watch_hub.h"

namespace natcd::nats {

// Owns the protobuf-c structs built for one reply.
class ProtoArena {
 public:
  template <typename T>
  T* New(void (*init)(T*)) {
    auto holder = std::make_shared<T>();
    init(holder.get());
    T* out = holder.get();
    holders_.push_back(std::move(holder));
    return out;
  }
  // n value-initialized Ts (e.g. ProtobufCBinaryData).
  template <typename T>
  T* Values(size_t n) {
    auto holder = std::make_shared<std::vector<T>>(n);
    T* out = holder->data();
    holders_.push_back(std::move(holder));
    return out;
  }
  // n null pointers to T.
  template <typename T>
  T** Array(size_t n) {
    auto holder = std::make_shared<std::vector<T*>>(n, nullptr);
    T** out = holder->data();
    holders_.push_back(std::move(holder));
    return out;
  }

 private:
  std::vector<std::shared_ptr<void>> holders_;
};

// Identity stamped on every ResponseHeader.
struct HeaderInfo {
  uint64_t cluster_id = 0;
  uint64_t member_id = 0;
  uint64_t raft_term = 0;
};

// Nested txns deeper than this are rejected (the bytes are untrusted).
constexpr int kTxnDepthMax = 16;

// ---- decode (protobuf → engine) ----
Status FromProto(const Natcd__V1__RangeRequest& in, RangeRequest* out);
Status FromProto(const Natcd__V1__PutRequest& in, PutRequest* out);
Status FromProto(const Natcd__V1__DeleteRangeRequest& in, DeleteRangeRequest* out);
Status FromProto(const Natcd__V1__TxnRequest& in, TxnRequest* out, int depth = 0);
Status FromProto(const Natcd__V1__CompactionRequest& in, CompactionRequest* out);
Status FromProto(const Natcd__V1__WatchCreateRequest& in, WatchOptions* out);

// ---- encode (engine → protobuf) ----
Natcd__V1__ResponseHeader* ToProto(const ResponseHeader& in, const HeaderInfo& info,
                                   ProtoArena* arena);
Natcd__V1__KeyValue* ToProto(const KeyValue& in, ProtoArena* arena);
Natcd__V1__Event* ToProto(const Event& in, bool with_prev_kv, ProtoArena* arena);
Natcd__V1__RangeResponse* ToProto(const RangeResponse& in, const HeaderInfo& info,
                                  ProtoArena* arena);
Natcd__V1__PutResponse* ToProto(const PutResponse& in, const HeaderInfo& info, ProtoArena* arena);
Natcd__V1__DeleteRangeResponse* ToProto(const DeleteRangeResponse& in, const HeaderInfo& info,
                                        ProtoArena* arena);
Natcd__V1__TxnResponse* ToProto(const TxnResponse& in, const HeaderInfo& info, ProtoArena* arena);
Natcd__V1__CompactionResponse* ToProto(const CompactionResponse& in, const HeaderInfo& info,
                                       ProtoArena* arena);
Natcd__V1__LeaseGrantResponse* ToProto(const LeaseGrantResponse& in, const HeaderInfo& info,
                                       ProtoArena* arena);
Natcd__V1__LeaseRevokeResponse* ToProto(const LeaseRevokeResponse& in, const HeaderInfo& info,
                                        ProtoArena* arena);
Natcd__V1__LeaseKeepAliveResponse* ToProto(const LeaseKeepAliveResponse& in, const HeaderInfo& info,
                                           ProtoArena* arena);
Natcd__V1__LeaseTimeToLiveResponse* ToProto(const LeaseTimeToLiveResponse& in,
                                            const HeaderInfo& info, ProtoArena* arena);
Natcd__V1__LeaseLeasesResponse* ToProto(const LeaseLeasesResponse& in, const HeaderInfo& info,
                                        ProtoArena* arena);
Natcd__V1__HashKVResponse* ToProto(const HashKVResponse& in, const HeaderInfo& info,
                                   ProtoArena* arena);
Natcd__V1__HashResponse* ToProto(const HashResponse& in, const HeaderInfo& info, ProtoArena* arena);
Natcd__V1__DefragmentResponse* ToProto(const DefragmentResponse& in, const HeaderInfo& info,
                                       ProtoArena* arena);
// Any write response as its message.
const ProtobufCMessage* ToProto(const WriteResponse& in, const HeaderInfo& info, ProtoArena* arena);

}  // namespace natcd::nats
