// Identical watches on many gRPC Watch streams share one encoding of each
// batch (WatchRegistry: encode once, each stream's watch_id spliced in):
// every stream gets every event exactly once and in order, under its own
// watch ID, in bytes protobuf would have written for it; a watch joining
// while writes go on sees no gap and no duplicate; watches of different
// filters or prev_kv never get each other's responses; a stream that does
// not read does not hold the others back, and catches up when it reads
// again, never canceled.
#include <atomic>
#include <thread>

#include "adapters/grpc/etcd_rpc.pb-c.h"
#include "adapters/nats/natcd.pb-c.h"
#include "grpc/etcdctl_fixture.h"
#include "grpc/grpc_client.h"

namespace natcd::testing {
namespace {

using Response = std::unique_ptr<Natcd__V1__WatchResponse, void (*)(Natcd__V1__WatchResponse*)>;

Response DecodeWatch(const std::string& bytes) {
  return Response(natcd__v1__watch_response__unpack(nullptr, bytes.size(),
                                                    reinterpret_cast<const uint8_t*>(bytes.data())),
                  [](Natcd__V1__WatchResponse* r) {
                    if (r) natcd__v1__watch_response__free_unpacked(r, nullptr);
                  });
}

struct WatchSpec {
  std::string key;
  std::string range_end;
  int64_t watch_id = 0;
  int64_t start_revision = 0;
  bool prev_kv = false;
  bool no_delete = false;
};

std::string WatchCreate(const WatchSpec& spec) {
  Natcd__V1__WatchCreateRequest create;
  natcd__v1__watch_create_request__init(&create);
  create.key = BinaryOf(spec.key);
  create.range_end = BinaryOf(spec.range_end);
  create.watch_id = spec.watch_id;
  create.start_revision = spec.start_revision;
  create.prev_kv = spec.prev_kv;
  Natcd__V1__WatchCreateRequest__FilterType no_delete =
      NATCD__V1__WATCH_CREATE_REQUEST__FILTER_TYPE__NODELETE;
  if (spec.no_delete) {
    create.filters = &no_delete;
    create.n_filters = 1;
  }
  Natcd__Grpc__WatchRequest request;
  natcd__grpc__watch_request__init(&request);
  request.request_union_case = NATCD__GRPC__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST;
  request.create_request = &create;
  return Pack(&request.base);
}

// One event as a watcher saw it.
struct Seen {
  int64_t revision = 0;
  bool is_delete = false;
  bool has_prev_kv = false;
};

class GrpcWatchFanoutTest : public EtcdctlTest {
 protected:
  void SetUp() override {
    channel_ = grpc::CreateChannel(endpoint_, grpc::InsecureChannelCredentials());
    stub_ = std::make_unique<grpc::GenericStub>(channel_);
  }

  // The revision of the put.
  int64_t Put(const std::string& key, const std::string& value) {
    Natcd__V1__PutRequest put;
    natcd__v1__put_request__init(&put);
    put.key = BinaryOf(key);
    put.value = BinaryOf(value);
    std::string reply;
    if (!UnaryCall(stub_.get(), "/etcdserverpb.KV/Put", Pack(&put.base), &reply).ok()) return 0;
    auto* r = natcd__v1__put_response__unpack(nullptr, reply.size(),
                                              reinterpret_cast<const uint8_t*>(reply.data()));
    if (r == nullptr) return 0;
    const int64_t revision = r->header != nullptr ? r->header->revision : 0;
    natcd__v1__put_response__free_unpacked(r, nullptr);
    return revision;
  }

  void Delete(const std::string& key) {
    Natcd__V1__DeleteRangeRequest del;
    natcd__v1__delete_range_request__init(&del);
    del.key = BinaryOf(key);
    ASSERT_TRUE(
        UnaryCall(stub_.get(), "/etcdserverpb.KV/DeleteRange", Pack(&del.base), nullptr).ok());
  }

  // Opens a watch and waits for its `created`.
  void Open(SyncStream* stream, const WatchSpec& spec) {
    ASSERT_TRUE(stream->ok());
    ASSERT_TRUE(stream->Write(WatchCreate(spec)));
    std::string bytes;
    ASSERT_TRUE(stream->Read(&bytes));
    Response r = DecodeWatch(bytes);
    ASSERT_TRUE(r != nullptr && r->created && !r->canceled);
    ASSERT_EQ(r->watch_id, spec.watch_id);
  }

  // Reads events of watch `watch_id` until `want` arrived (or a deadline):
  // each response must be exactly the bytes protobuf writes for it.
  std::vector<Seen> ReadEvents(SyncStream* stream, int64_t watch_id, size_t want) {
    std::vector<Seen> seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    std::string bytes;
    while (seen.size() < want && std::chrono::steady_clock::now() < deadline &&
           stream->Read(&bytes)) {
      Response r = DecodeWatch(bytes);
      EXPECT_TRUE(r != nullptr);
      if (r == nullptr) break;
      EXPECT_EQ(r->watch_id, watch_id);
      EXPECT_EQ(Pack(&r->base), bytes) << "not the canonical encoding";
      for (size_t i = 0; i < r->n_events; ++i) {
        const Natcd__V1__Event* e = r->events[i];
        seen.push_back({e->kv->mod_revision, e->type == NATCD__V1__EVENT__EVENT_TYPE__DELETE,
                        e->prev_kv != nullptr});
      }
    }
    return seen;
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

TEST_F(GrpcWatchFanoutTest, ManyStreamsWithIdenticalWatchesGetEveryEventOnceInOrder) {
  constexpr int kStreams = 16;
  constexpr int kPuts = 40;
  std::vector<std::unique_ptr<SyncStream>> streams;
  std::vector<int64_t> ids;
  for (int s = 0; s < kStreams; ++s) {
    // Watch IDs of one, two and three varint bytes, and 0 (omitted on the wire).
    ids.push_back(s == 0 ? 0 : s == 1 ? 300 : s == 2 ? 70'000 : s);
    streams.push_back(std::make_unique<SyncStream>(stub_.get(), "/etcdserverpb.Watch/Watch"));
    Open(streams.back().get(), {"/fan/", "/fan0", ids.back()});
  }
  std::vector<int64_t> revisions;
  for (int i = 0; i < kPuts; ++i) {
    revisions.push_back(Put("/fan/" + std::to_string(i % 7), std::string(100, 'v')));
    ASSERT_GT(revisions.back(), 0);
  }
  for (int s = 0; s < kStreams; ++s) {
    std::vector<Seen> seen = ReadEvents(streams[s].get(), ids[s], kPuts);
    ASSERT_EQ(seen.size(), static_cast<size_t>(kPuts)) << "stream " << s;
    for (int i = 0; i < kPuts; ++i) EXPECT_EQ(seen[i].revision, revisions[i]) << "stream " << s;
  }
}

TEST_F(GrpcWatchFanoutTest, AWatchJoiningUnderWritesSeesNoGapAndNoDuplicate) {
  SyncStream first(stub_.get(), "/etcdserverpb.Watch/Watch");
  Open(&first, {"/join/", "/join0", 1});
  constexpr int kPuts = 150;
  std::vector<int64_t> revisions(kPuts);
  std::atomic<int> done{0};
  std::thread writer([&] {
    for (int i = 0; i < kPuts; ++i) {
      revisions[i] = Put("/join/" + std::to_string(i % 5), "v");
      done = i + 1;
    }
  });
  // Joiners while the writes go on: from "now", and from a revision
  // already written (history first, then live).
  while (done.load() < kPuts / 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int64_t start = revisions[10];
  SyncStream from_history(stub_.get(), "/etcdserverpb.Watch/Watch");
  Open(&from_history, {"/join/", "/join0", 2, start});
  writer.join();
  const int64_t last = revisions.back();
  std::vector<Seen> all = ReadEvents(&first, 1, kPuts);
  ASSERT_EQ(all.size(), static_cast<size_t>(kPuts));
  std::vector<Seen> joined = ReadEvents(&from_history, 2, static_cast<size_t>(kPuts - 10));
  ASSERT_EQ(joined.size(), static_cast<size_t>(kPuts - 10));
  for (size_t i = 0; i < joined.size(); ++i) EXPECT_EQ(joined[i].revision, start + int64_t(i));
  EXPECT_EQ(joined.back().revision, last);
}

TEST_F(GrpcWatchFanoutTest, WatchesOfDifferentFiltersOrPrevKvNeverMix) {
  SyncStream a(stub_.get(), "/etcdserverpb.Watch/Watch");
  SyncStream b(stub_.get(), "/etcdserverpb.Watch/Watch");
  Open(&a, {"/mix/", "/mix0", 5});
  Open(&a, {"/mix/", "/mix0", 6, 0, /*prev_kv=*/true});
  Open(&b, {"/mix/", "/mix0", 5, 0, false, /*no_delete=*/true});
  Open(&b, {"/mix/", "/mix0", 6});
  ASSERT_GT(Put("/mix/k", "1"), 0);
  ASSERT_GT(Put("/mix/k", "2"), 0);
  Delete("/mix/k");
  // Per stream the responses of its two watches interleave: sort them out.
  auto read_both = [&](SyncStream* s, std::map<int64_t, std::vector<Seen>>* by_id, size_t want) {
    size_t n = 0;
    std::string bytes;
    while (n < want && s->Read(&bytes)) {
      Response r = DecodeWatch(bytes);
      ASSERT_TRUE(r != nullptr);
      EXPECT_EQ(Pack(&r->base), bytes);
      for (size_t i = 0; i < r->n_events; ++i, ++n) {
        const Natcd__V1__Event* e = r->events[i];
        (*by_id)[r->watch_id].push_back({e->kv->mod_revision,
                                         e->type == NATCD__V1__EVENT__EVENT_TYPE__DELETE,
                                         e->prev_kv != nullptr});
      }
    }
  };
  std::map<int64_t, std::vector<Seen>> on_a, on_b;
  read_both(&a, &on_a, 6);
  read_both(&b, &on_b, 5);
  ASSERT_EQ(on_a[5].size(), 3u);
  for (const Seen& e : on_a[5]) EXPECT_FALSE(e.has_prev_kv);
  ASSERT_EQ(on_a[6].size(), 3u);
  EXPECT_FALSE(on_a[6][0].has_prev_kv);  // the key's first put
  EXPECT_TRUE(on_a[6][1].has_prev_kv);
  EXPECT_TRUE(on_a[6][2].has_prev_kv);
  ASSERT_EQ(on_b[5].size(), 2u);  // no delete
  for (const Seen& e : on_b[5]) EXPECT_FALSE(e.is_delete);
  ASSERT_EQ(on_b[6].size(), 3u);
  EXPECT_TRUE(on_b[6][2].is_delete);
  for (const Seen& e : on_b[6]) EXPECT_FALSE(e.has_prev_kv);
}

TEST_F(GrpcWatchFanoutTest, AStreamThatDoesNotReadDoesNotHoldTheOthersBack) {
  SyncStream stalled(stub_.get(), "/etcdserverpb.Watch/Watch");
  Open(&stalled, {"/slow/", "/slow0", 1});
  SyncStream reader(stub_.get(), "/etcdserverpb.Watch/Watch");
  Open(&reader, {"/slow/", "/slow0", 1});
  // Far beyond what HTTP/2's windows let reach a client that does not
  // read: the stalled stream's writes stop, the reader's go on.
  constexpr int kPuts = 120;
  const std::string value(32 << 10, 'x');
  for (int i = 0; i < kPuts; ++i) ASSERT_GT(Put("/slow/" + std::to_string(i % 3), value), 0);
  EXPECT_EQ(ReadEvents(&reader, 1, kPuts).size(), static_cast<size_t>(kPuts));
}

// A hub queue of a few events: a stream that does not read fills its
// 8 MiB of unwritten responses, then its watch's queue, and falls behind.
class GrpcSlowWatchTest : public GrpcWatchFanoutTest {
 protected:
  static void SetUpTestSuite() { StartSuite({"--watch-queue-events", "8"}); }
};

// etcd never cancels a slow watcher: it catches up from history once its
// client reads again, with every event once, in order.
TEST_F(GrpcSlowWatchTest, AStreamThatFellBehindCatchesUpWithoutACancel) {
  SyncStream stalled(stub_.get(), "/etcdserverpb.Watch/Watch");
  Open(&stalled, {"/behind/", "/behind0", 1});
  constexpr int kPuts = 64;  // 16 MiB: past the stream's bound and HTTP/2's windows
  const std::string value(256 << 10, 'x');
  std::vector<int64_t> revisions;
  for (int i = 0; i < kPuts; ++i) {
    revisions.push_back(Put("/behind/" + std::to_string(i % 3), value));
    ASSERT_GT(revisions.back(), 0);
  }
  std::vector<int64_t> got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string bytes;
  while (got.size() < revisions.size() && std::chrono::steady_clock::now() < deadline &&
         stalled.Read(&bytes)) {
    Response r = DecodeWatch(bytes);
    ASSERT_TRUE(r != nullptr);
    ASSERT_FALSE(r->canceled) << r->cancel_reason;
    for (size_t i = 0; i < r->n_events; ++i) got.push_back(r->events[i]->kv->mod_revision);
  }
  EXPECT_EQ(got, revisions);
}

}  // namespace
}  // namespace natcd::testing
