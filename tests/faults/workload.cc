#include "faults/workload.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>

namespace natcd::testing {
namespace {

// A definite refusal did not take effect; anything else on a write (a
// timeout after every retry, no responders, a lost connection, a 503 after
// an earlier attempt timed out) may have.
Outcome Classify(natcdStatus s) {
  switch (s) {
    case natcdStatus_OK:
      return Outcome::kOk;
    case natcdStatus_InvalidArg:
    case natcdStatus_BadRequest:
    case natcdStatus_TooLarge:
    case natcdStatus_NotFound:
    case natcdStatus_Conflict:
    case natcdStatus_Compacted:
      return Outcome::kFailed;
    default:
      return Outcome::kUnknown;
  }
}

std::string Text(const char* data, size_t len) { return std::string(data, len); }

void SleepMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kUnknown:
      return "unknown";
  }
  return "?";
}

natcdClient* ConnectClient(const std::string& urls, int64_t timeout_ms, int retries) {
  // The connection is the harness's own: natcdClient_Connect hands its URL
  // to natsOptions_SetURL, which takes one server, not a list.
  std::vector<std::string> list;
  std::stringstream in(urls);
  for (std::string url; std::getline(in, url, ',');) {
    if (!url.empty()) list.push_back(url);
  }
  std::vector<const char*> servers;
  for (const std::string& url : list) servers.push_back(url.c_str());
  natsOptions* nopts = nullptr;
  natsConnection* nc = nullptr;
  natsStatus ns = natsOptions_Create(&nopts);
  if (ns == NATS_OK) {
    ns = natsOptions_SetServers(nopts, servers.data(), static_cast<int>(servers.size()));
  }
  if (ns == NATS_OK) ns = natsOptions_SetNoRandomize(nopts, true);  // the first is "its" server
  if (ns == NATS_OK) ns = natsOptions_SetMaxReconnect(nopts, -1);
  if (ns == NATS_OK) ns = natsOptions_SetReconnectWait(nopts, 100);
  if (ns == NATS_OK) ns = natsConnection_Connect(&nc, nopts);
  natsOptions_Destroy(nopts);
  if (ns != NATS_OK) return nullptr;
  natcdClientOptions opts;
  natcdClientOptions_Init(&opts);
  opts.timeout_ms = timeout_ms;
  opts.retries = retries;
  opts.backoff_max_ms = 500;
  natcdClient* client = nullptr;
  if (natcdClient_Create(&client, nc, &opts) != natcdStatus_OK) {
    natsConnection_Destroy(nc);
    return nullptr;
  }
  return client;
}

void DestroyClient(natcdClient* client) {
  if (client == nullptr) return;
  natsConnection* nc = natcdClient_GetConnection(client);
  natcdClient_Destroy(client);
  natsConnection_Destroy(nc);
}

Workload::Workload(WorkloadOptions options, const RunClock* clock)
    : options_(std::move(options)), clock_(clock) {}

Workload::~Workload() {
  StopClients();
  StopWatches();
  for (natcdClient* client : clients_) DestroyClient(client);
}

::testing::AssertionResult Workload::Start() {
  auto url = [&](int i) { return options_.client_urls[i % options_.client_urls.size()]; };
  int n = 0;
  for (int w = 0; w < options_.watchers; w++) {
    auto watcher = std::make_unique<Watcher>();
    watcher->clock = clock_;
    watcher->client = ConnectClient(url(n++), options_.request_timeout_ms, options_.retries);
    if (watcher->client == nullptr) return ::testing::AssertionFailure() << "watcher connect";
    clients_.push_back(watcher->client);
    natcdWatchOptions wopts{};
    wopts.prefix = true;
    wopts.heartbeat_ms = 500;
    natcdStatus s =
        natcdWatch_Create(&watcher->watch, watcher->client, NATCD_STR(kKvPrefix), nullptr, 0, 1,
                          &wopts, &Workload::OnWatchNotice, watcher.get());
    if (s != natcdStatus_OK) {
      return ::testing::AssertionFailure() << "watch create: " << natcdStatus_GetText(s);
    }
    watches_.push_back(std::move(watcher));
  }
  std::vector<natcdClient*> kv_clients;
  for (int c = 0; c < options_.kv_clients; c++) {
    natcdClient* client = ConnectClient(url(n++), options_.request_timeout_ms, options_.retries);
    if (client == nullptr) return ::testing::AssertionFailure() << "client connect";
    clients_.push_back(client);
    kv_clients.push_back(client);
  }
  natcdClient* lease_client = nullptr;
  if (options_.leases) {
    lease_client = ConnectClient(url(n++), options_.request_timeout_ms, options_.retries);
    if (lease_client == nullptr) return ::testing::AssertionFailure() << "lease client connect";
    clients_.push_back(lease_client);
  }
  std::vector<natcdClient*> lock_clients;
  for (int c = 0; c < options_.lock_clients; c++) {
    natcdClient* client = ConnectClient(url(n++), options_.request_timeout_ms, options_.retries);
    if (client == nullptr) return ::testing::AssertionFailure() << "lock client connect";
    clients_.push_back(client);
    lock_clients.push_back(client);
  }
  for (int c = 0; c < options_.lock_clients; c++) {
    threads_.emplace_back([this, c, client = lock_clients[c]] { RunLockClient(c, client); });
  }
  for (int c = 0; c < options_.kv_clients; c++) {
    threads_.emplace_back([this, c, client = kv_clients[c]] { RunKvClient(c, client); });
  }
  if (lease_client != nullptr) {
    threads_.emplace_back([this, lease_client] { RunKeptLease(lease_client); });
    threads_.emplace_back([this, lease_client] { RunAbandonedLeases(lease_client); });
  }
  return ::testing::AssertionSuccess();
}

void Workload::StopClients() {
  stop_ = true;
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void Workload::StopWatches() {
  for (auto& w : watches_) {
    natcdWatch_Destroy(w->watch);
    w->watch = nullptr;
  }
}

void Workload::OnWatchNotice(natcdWatch*, const natcdWatchNotice* notice, void* closure) {
  auto* w = static_cast<Watcher*>(closure);
  if (notice->kind != natcdWatchNotice_Event) return;
  WatchEvent e;
  e.revision = notice->revision;
  e.is_delete = notice->type == natcdEventType_Delete;
  e.key = Text(notice->kv->key, notice->kv->key_len);
  e.value = Text(notice->kv->value, notice->kv->value_len);
  e.last_in_revision = notice->last_in_revision;
  e.at_us = w->clock->NowUs();
  std::lock_guard<std::mutex> lock(w->mu);
  w->events.push_back(std::move(e));
}

std::vector<WatchEvent> Workload::WatchEvents(int watcher) const {
  std::lock_guard<std::mutex> lock(watches_[watcher]->mu);
  return watches_[watcher]->events;
}

int64_t Workload::WatchLastRevision(int watcher) const {
  std::lock_guard<std::mutex> lock(watches_[watcher]->mu);
  const auto& events = watches_[watcher]->events;
  return events.empty() ? 0 : events.back().revision;
}

std::string Workload::WatchStats(int watcher) const {
  natcdWatchStats stats{};
  if (watches_[watcher]->watch != nullptr) natcdWatch_GetStats(&stats, watches_[watcher]->watch);
  std::ostringstream out;
  out << "events " << stats.events << ", resumes " << stats.resumes << " (gaps " << stats.gaps
      << ", cancels " << stats.server_cancels << ", silences " << stats.silences << ", reconnects "
      << stats.reconnects << "), duplicates dropped " << stats.duplicates;
  return out.str();
}

std::vector<LeaseHistory> Workload::Leases() const {
  std::lock_guard<std::mutex> lock(lease_mu_);
  return leases_;
}

std::vector<LockHold> Workload::LockHolds() const {
  std::lock_guard<std::mutex> lock(lock_mu_);
  return lock_holds_;
}

void Workload::RunLockClient(int c, natcdClient* client) {
  // Takes /l/lock, holds it lock_hold_ms, lets it go, again. A holding is
  // recorded only when the lock was acquired and the session still lived
  // after the release's call; a holding whose session was lost is recorded
  // as held at its acquisition only (when its lease ended on the server is
  // not known here).
  natcdSession* session = nullptr;
  natcdMutex* mutex = nullptr;
  while (!stop_) {
    if (session == nullptr || natcdSession_IsExpired(session)) {
      natcdMutex_Destroy(mutex);
      mutex = nullptr;
      natcdSession_Destroy(session);
      session = nullptr;
      if (natcdSession_Create(&session, client, options_.lock_session_ttl_s, nullptr, nullptr) !=
              natcdStatus_OK ||
          natcdMutex_Create(&mutex, session, "/l/lock") != natcdStatus_OK) {
        SleepMs(200);
        continue;
      }
    }
    LockHold hold;
    hold.client = c;
    hold.acquire_call_us = clock_->NowUs();
    if (natcdMutex_Lock(mutex, 3000) != natcdStatus_OK) continue;
    hold.acquired_us = clock_->NowUs();
    natcdMutex_Key(mutex, &hold.fencing_revision);
    SleepMs(options_.lock_hold_ms);
    hold.released_us = clock_->NowUs();
    const bool released = natcdMutex_Unlock(mutex) == natcdStatus_OK;
    if (natcdSession_IsExpired(session)) hold.released_us = hold.acquired_us;
    {
      std::lock_guard<std::mutex> lock(lock_mu_);
      lock_holds_.push_back(hold);
    }
    // A key left behind would keep the others waiting until its lease ends.
    if (!released) natcdSession_Orphan(session);
  }
  natcdMutex_Destroy(mutex);
  natcdSession_Destroy(session);
}

void Workload::RunKvClient(int c, natcdClient* client) {
  std::mt19937_64 rng(options_.seed * 1000003u + static_cast<uint64_t>(c));
  std::map<std::string, std::string> known;  // the last value this client saw per key
  int64_t seq = 0;
  while (!stop_) {
    const int64_t epoch = clock_->NowUs() / 1000 / options_.key_epoch_ms;
    char key[64];
    std::snprintf(key, sizeof key, "/f/e%05lld/k%d", static_cast<long long>(epoch),
                  static_cast<int>(rng() % options_.keys_per_epoch));
    const int dice = static_cast<int>(rng() % 10);
    KvRecord r;
    r.client = c;
    r.key = key;
    if (dice < 4) {
      r.kind = KvRecord::Kind::kPut;
      r.value = "c" + std::to_string(c) + "-" + std::to_string(seq++);
      natcdPutResponse* resp = nullptr;
      r.call_us = clock_->NowUs();
      natcdStatus s = natcdKV_Put(&resp, client, r.key.data(), r.key.size(), r.value.data(),
                                  r.value.size(), nullptr);
      r.ret_us = clock_->NowUs();
      r.outcome = Classify(s);
      if (s == natcdStatus_OK) {
        r.revision = resp->header.revision;
        known[r.key] = r.value;
      }
      natcdPutResponse_Destroy(resp);
    } else if (dice < 7) {
      r.kind = KvRecord::Kind::kCas;
      r.value = "c" + std::to_string(c) + "-" + std::to_string(seq++);
      r.expected = known[r.key];
      natcdTxn* txn = nullptr;
      natcdTxn_Create(&txn);
      if (r.expected.empty()) {
        natcdTxn_IfVersion(txn, r.key.data(), r.key.size(), natcdCompare_Equal, 0);
      } else {
        natcdTxn_IfValue(txn, r.key.data(), r.key.size(), natcdCompare_Equal, r.expected.data(),
                         r.expected.size());
      }
      natcdTxn_ThenPut(txn, r.key.data(), r.key.size(), r.value.data(), r.value.size(), nullptr);
      natcdTxnResponse* resp = nullptr;
      r.call_us = clock_->NowUs();
      natcdStatus s = natcdTxn_Commit(&resp, client, txn);
      r.ret_us = clock_->NowUs();
      r.outcome = Classify(s);
      if (s == natcdStatus_OK) {
        r.cas_ok = resp->succeeded;
        r.revision = resp->header.revision;
        if (r.cas_ok) known[r.key] = r.value;
      }
      natcdTxnResponse_Destroy(resp);
      natcdTxn_Destroy(txn);
    } else {
      r.kind = KvRecord::Kind::kGet;
      natcdRangeResponse* resp = nullptr;
      r.call_us = clock_->NowUs();
      natcdStatus s = natcdKV_Get(&resp, client, r.key.data(), r.key.size(), nullptr);
      r.ret_us = clock_->NowUs();
      // A read that did not answer changed nothing: failed, not unknown.
      r.outcome = s == natcdStatus_OK ? Outcome::kOk : Outcome::kFailed;
      if (s == natcdStatus_OK) {
        r.revision = resp->header.revision;
        if (resp->n_kvs > 0) {
          r.output = Text(resp->kvs[0].value, resp->kvs[0].value_len);
          r.mod_revision = resp->kvs[0].mod_revision;
        }
        known[r.key] = r.output;
      }
      natcdRangeResponse_Destroy(resp);
    }
    kv_.Add(std::move(r));
    SleepMs(options_.op_pause_ms);
  }
}

int Workload::GrantLease(natcdClient* client, int64_t ttl_s, const std::string& key, bool kept) {
  // Recorded only when the grant and the put were both acknowledged (an
  // unknown grant or put proves nothing either way).
  LeaseHistory lease;
  lease.key = key;
  lease.kept_alive = kept;
  lease.grant_call_us = clock_->NowUs();
  if (natcdLease_Grant(&lease.id, &lease.granted_ttl_s, client, ttl_s, 0) != natcdStatus_OK) {
    return -1;
  }
  lease.grant_ret_us = clock_->NowUs();
  natcdPutOptions popts{};
  popts.lease = lease.id;
  if (natcdKV_Put(nullptr, client, key.data(), key.size(), NATCD_STR("v"), &popts) !=
      natcdStatus_OK) {
    return -1;
  }
  std::lock_guard<std::mutex> lock(lease_mu_);
  leases_.push_back(std::move(lease));
  return static_cast<int>(leases_.size()) - 1;
}

LeaseRecord Workload::ReadLeaseKey(natcdClient* client, const std::string& key) {
  LeaseRecord r;
  r.kind = LeaseRecord::Kind::kRead;
  natcdRangeResponse* resp = nullptr;
  r.call_us = clock_->NowUs();
  natcdStatus s = natcdKV_Get(&resp, client, key.data(), key.size(), nullptr);
  r.ret_us = clock_->NowUs();
  r.ok = s == natcdStatus_OK;
  r.present = r.ok && resp->n_kvs > 0;
  natcdRangeResponse_Destroy(resp);
  return r;
}

void Workload::Record(int lease, LeaseRecord r) {
  std::lock_guard<std::mutex> lock(lease_mu_);
  leases_[lease].records.push_back(r);
}

void Workload::RunKeptLease(natcdClient* client) {
  // Renewed every TTL/5 and its key read after each renewal, on a thread of
  // its own so that no slow read of another lease delays a renewal.
  int lease = -1;
  while (!stop_ && lease < 0)
    lease = GrantLease(client, options_.kept_lease_ttl_s, "/l/kept", true);
  if (lease < 0) return;
  const std::string key = Leases()[lease].key;
  const int64_t id = Leases()[lease].id;
  while (!stop_) {
    LeaseRecord k;
    k.kind = LeaseRecord::Kind::kKeepAlive;
    int64_t ttl = 0;
    k.call_us = clock_->NowUs();
    natcdStatus s = natcdLease_KeepAliveOnce(&ttl, client, id);
    k.ret_us = clock_->NowUs();
    k.ok = s == natcdStatus_OK || s == natcdStatus_NotFound;
    k.present = s == natcdStatus_OK && ttl > 0;
    Record(lease, k);
    Record(lease, ReadLeaseKey(client, key));
    SleepMs(options_.kept_lease_ttl_s * 1000 / 5);
  }
}

void Workload::RunAbandonedLeases(natcdClient* client) {
  int64_t next_abandon_us = clock_->NowUs();
  int n = 0;
  while (!stop_) {
    if (clock_->NowUs() >= next_abandon_us) {
      GrantLease(client, options_.abandoned_lease_ttl_s, "/l/abandoned-" + std::to_string(n++),
                 false);
      next_abandon_us = clock_->NowUs() + options_.abandon_every_ms * 1000;
    }
    std::vector<LeaseHistory> leases = Leases();
    for (size_t i = 0; i < leases.size() && !stop_; i++) {
      if (leases[i].kept_alive) continue;
      // Read until its key is seen gone twice.
      int gone = 0;
      for (const LeaseRecord& r : leases[i].records) gone += r.ok && !r.present;
      if (gone < 2) Record(static_cast<int>(i), ReadLeaseKey(client, leases[i].key));
    }
    SleepMs(250);
  }
}

}  // namespace natcd::testing
