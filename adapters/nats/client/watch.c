// Watch: one thread per watch reads its stream from a synchronous
// subscription on an inbox of its own, delivers whole revisions to the
// handler, acknowledges, and re-creates the watch from the last delivered
// revision + 1 whenever the stream cannot be trusted any more.
//
// Exactly-once delivery rests on two facts: (1) natcd delivers a watch's
// events in revision order, each once, from start_revision (PROTOCOL.md);
// (2) last_rev, the revision up to which every event has been handed to the
// handler, only moves past a revision once all of it was delivered
// (fragments are buffered until the last one), or to a progress bookmark.
// A resume asks for last_rev + 1 on a NEW inbox, so messages of the old
// stream can never be mixed in, and any event at or below last_rev is
// dropped anyway.
//
// Watch groups (PROTOCOL.md): unless no_group, the create asks for one. An
// offer on the watch's inbox names the group's subject: the worker
// subscribes it (synchronously: its messages wait in that subscription
// until the join) and acks the offer saying so. The join, on the inbox,
// gives the group_seq from which the group's messages continue the stream;
// the worker then reads the group's subscription (and still the inbox, for
// a reclaim), drops group messages below that seq, and resumes on a gap
// exactly as on a seq gap of its own stream. It acks the group's
// heartbeats, which keeps it a member.
#include "internal.h"

#include <stdio.h>
#include <string.h>

// How long one wait for a message lasts: bounds the reaction to Cancel and
// to a NATS reconnect.
enum { kPollMs = 50 };
// Silence longer than this many heartbeats: the stream is dead.
enum { kSilentHeartbeats = 3 };

struct natcdWatch {
  natcdClient* client;
  char* key;
  size_t key_len;
  ProtobufCBinaryData range_end;
  bool prev_kv;
  bool no_put;
  bool no_delete;
  bool progress_notify;
  int64_t heartbeat_ms;
  bool continue_after_compaction;
  bool group;  // ask for a watch group
  int group_pending_msgs;
  natcdWatchHandler handler;
  void* closure;
  char* ack_subject;
  char* cancel_subject;

  // The worker's (and natcdWatch_Create's, before the worker starts).
  natsSubscription* sub;
  natsInbox* inbox;
  natsSubscription* group_sub;  // the offered group's subject, once subscribed
  int64_t group_id;             // of group_sub
  bool joined;                  // the stream continues on group_sub
  uint64_t group_next_seq;
  uint64_t next_seq;
  int64_t last_rev;
  int64_t last_activity;
  uint64_t reconnects_seen;
  int64_t resumed_at;     // last_rev at the previous resume (-1: none yet)
  int64_t stall_backoff;  // pause before a resume that follows no progress, ms
  natsStatistics* nstats;
  Natcd__V1__WatchResponse** frags;  // a revision split in fragments, so far
  size_t n_frags;
  size_t cap_frags;

  pthread_mutex_t mu;
  pthread_cond_t cond;
  bool stop;              // guarded by mu
  int64_t watch_id;       // guarded by mu (written by the worker)
  int progress_wanted;    // guarded by mu
  natcdWatchStats stats;  // guarded by mu

  pthread_t thread;
  bool started;
  bool thread_joined;
};

static bool _stopped(natcdWatch* w) {
  pthread_mutex_lock(&w->mu);
  bool stop = w->stop;
  pthread_mutex_unlock(&w->mu);
  return stop;
}

// Sleeps up to ms, returning early (true) if the watch is stopped.
static bool _pause(natcdWatch* w, int64_t ms) {
  pthread_mutex_lock(&w->mu);
  const int64_t until = _nowMs() + ms;
  while (!w->stop && _nowMs() < until) _condWaitMs(&w->cond, &w->mu, until - _nowMs());
  bool stop = w->stop;
  pthread_mutex_unlock(&w->mu);
  return stop;
}

static uint64_t _reconnects(natcdWatch* w) {
  uint64_t n = 0;
  if (w->nstats != NULL && natsConnection_GetStats(w->client->nc, w->nstats) == NATS_OK) {
    natsStatistics_GetCounts(w->nstats, NULL, NULL, NULL, NULL, &n);
  }
  return n;
}

static void _leaveGroup(natcdWatch* w) {
  _subscriptionRetire(w->client, w->group_sub);
  w->group_sub = NULL;
  w->group_id = 0;
  w->joined = false;
  w->group_next_seq = 0;
  pthread_mutex_lock(&w->mu);
  w->stats.in_group = false;
  pthread_mutex_unlock(&w->mu);
}

static void _freeFrags(natcdWatch* w) {
  for (size_t i = 0; i < w->n_frags; ++i) {
    protobuf_c_message_free_unpacked(&w->frags[i]->base, NULL);
  }
  w->n_frags = 0;
}

// Forgets the current stream (and tells natcd to drop it, best effort).
static void _detach(natcdWatch* w, bool tell_server) {
  pthread_mutex_lock(&w->mu);
  int64_t id = w->watch_id;
  w->watch_id = 0;
  pthread_mutex_unlock(&w->mu);
  if (tell_server && id != 0 && w->sub != NULL) {
    Natcd__V1__WatchCancelRequest req;
    natcd__v1__watch_cancel_request__init(&req);
    req.watch_id = id;
    uint8_t buf[32];
    size_t len = natcd__v1__watch_cancel_request__pack(&req, buf);
    (void)natsConnection_Publish(w->client->nc, w->cancel_subject, buf, (int)len);
  }
  _subscriptionRetire(w->client, w->sub);
  w->sub = NULL;
  _leaveGroup(w);
  natsInbox_Destroy(w->inbox);
  w->inbox = NULL;
  _freeFrags(w);
}

// One P.watch.create on a fresh inbox. On success the new stream replaces
// the current one. *compact_revision is set for natcdStatus_Compacted;
// *revision to the create reply's header revision.
static natcdStatus _attach(natcdWatch* w, int64_t start_revision, int64_t* compact_revision,
                           int64_t* revision) {
  natsInbox* inbox = NULL;
  natsSubscription* sub = NULL;
  natsStatus ns = natsInbox_Create(&inbox);
  if (ns == NATS_OK) ns = natsConnection_SubscribeSync(&sub, w->client->nc, inbox);
  if (ns != NATS_OK) {
    natsInbox_Destroy(inbox);
    return _setNatsError(natsConnection_IsReconnecting(w->client->nc) ? natcdStatus_Timeout
                                                                      : natcdStatus_ConnectionError,
                         ns, "watch inbox");
  }
  Natcd__V1__WatchCreateRequest req;
  natcd__v1__watch_create_request__init(&req);
  req.key.data = (uint8_t*)w->key;
  req.key.len = w->key_len;
  req.range_end = w->range_end;
  req.start_revision = start_revision;
  req.progress_notify = w->progress_notify;
  Natcd__V1__WatchCreateRequest__FilterType filters[2];
  if (w->no_put) filters[req.n_filters++] = NATCD__V1__WATCH_CREATE_REQUEST__FILTER_TYPE__NOPUT;
  if (w->no_delete) {
    filters[req.n_filters++] = NATCD__V1__WATCH_CREATE_REQUEST__FILTER_TYPE__NODELETE;
  }
  req.filters = filters;
  req.prev_kv = w->prev_kv;
  req.fragment = true;
  req.deliver_subject = inbox;
  req.group = w->group;
  ProtobufCMessage* reply = NULL;
  // One attempt: a retry must use a new inbox (a create whose reply was
  // lost may still have made a watch that publishes to this one).
  const _requestOpts once = {.retries = 0};
  natcdStatus s = _request(&reply, w->client, "watch.create", &req.base,
                           &natcd__v1__watch_response__descriptor, &once);
  if (s == natcdStatus_OK) {
    const Natcd__V1__WatchResponse* r = (const Natcd__V1__WatchResponse*)reply;
    if (r->canceled && r->compact_revision > 0) {
      *compact_revision = r->compact_revision;
      // As a range would say it (410, with the compact revision to parse).
      char text[256];
      snprintf(text, sizeof text,
               "ErrCompacted: watch from revision %lld: %s; compact revision is %lld",
               (long long)start_revision, r->cancel_reason ? r->cancel_reason : "",
               (long long)r->compact_revision);
      s = _setServiceError(410, text);
    } else if (r->canceled) {
      s = _setError(natcdStatus_Unavailable, "watch create canceled: %s",
                    r->cancel_reason ? r->cancel_reason : "");
    } else if (!r->created) {
      s = _setError(natcdStatus_ProtocolError, "watch create reply without created");
    } else {
      _detach(w, false);
      w->sub = sub;
      w->inbox = inbox;
      sub = NULL;
      inbox = NULL;
      w->next_seq = 1;
      w->last_activity = _nowMs();
      w->reconnects_seen = _reconnects(w);
      *revision = r->header != NULL ? r->header->revision : 0;
      pthread_mutex_lock(&w->mu);
      w->watch_id = r->watch_id;
      pthread_mutex_unlock(&w->mu);
    }
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  _subscriptionRetire(w->client, sub);
  natsInbox_Destroy(inbox);
  return s;
}

static bool _retryable(natcdStatus s) {
  switch (s) {
    case natcdStatus_Timeout:
    case natcdStatus_NoResponders:
    case natcdStatus_ConnectionError:
    case natcdStatus_Unavailable:
    case natcdStatus_TooManyRequests:
    case natcdStatus_ProtocolError:
    case natcdStatus_Internal:
    case natcdStatus_NoMemory:
      return true;
    default:
      return false;
  }
}

static void _end(natcdWatch* w) {
  pthread_mutex_lock(&w->mu);
  w->stats.ended = true;
  pthread_mutex_unlock(&w->mu);
}

static void _notifyCompacted(natcdWatch* w, int64_t compact_revision) {
  natcdWatchNotice n;
  memset(&n, 0, sizeof n);
  n.kind = natcdWatchNotice_Compacted;
  n.revision = w->last_rev + 1;
  n.compact_revision = compact_revision;
  if (!_stopped(w)) w->handler(w, &n, w->closure);
}

// Re-creates the watch from last_rev + 1, for as long as it takes. false:
// the watch has ended (stopped, compacted, or failed for good).
static bool _resume(natcdWatch* w) {
  pthread_mutex_lock(&w->mu);
  w->stats.resumes++;
  pthread_mutex_unlock(&w->mu);
  _detach(w, true);
  // A stream that fails again before delivering anything (say, natcd
  // cannot send some message and the watch keeps hitting a gap there)
  // must not spin: such resumes back off.
  if (w->last_rev == w->resumed_at) {
    if (_pause(w, w->stall_backoff)) return false;
    w->stall_backoff = w->stall_backoff * 2 > w->client->backoff_max_ms ? w->client->backoff_max_ms
                                                                        : w->stall_backoff * 2;
  } else {
    w->stall_backoff = w->client->backoff_ms;
  }
  w->resumed_at = w->last_rev;
  int64_t backoff = w->client->backoff_ms;
  for (;;) {
    if (_stopped(w)) return false;
    int64_t compact = 0;
    int64_t revision = 0;
    natcdStatus s = _attach(w, w->last_rev + 1, &compact, &revision);
    if (s == natcdStatus_OK) return true;
    if (s == natcdStatus_Compacted) {
      _notifyCompacted(w, compact);
      if (!w->continue_after_compaction) {
        _end(w);
        return false;
      }
      w->last_rev = compact - 1;
      continue;
    }
    if (!_retryable(s)) {
      natcdError e;
      natcd_GetLastError(&e);
      natcdWatchNotice n;
      memset(&n, 0, sizeof n);
      n.kind = natcdWatchNotice_Failed;
      n.revision = w->last_rev + 1;
      n.status = s;
      n.text = e.text;
      if (!_stopped(w)) w->handler(w, &n, w->closure);
      _end(w);
      return false;
    }
    if (_pause(w, backoff)) return false;
    backoff = backoff * 2 > w->client->backoff_max_ms ? w->client->backoff_max_ms : backoff * 2;
  }
}

static void _ackGroup(natcdWatch* w, int64_t watch_id, uint64_t seq, bool group_subscribed,
                      int64_t group_id) {
  Natcd__V1__WatchAckRequest ack;
  natcd__v1__watch_ack_request__init(&ack);
  ack.watch_id = watch_id;
  ack.seq = seq;
  ack.group_subscribed = group_subscribed;
  ack.group_id = group_id;
  uint8_t buf[64];
  size_t len = natcd__v1__watch_ack_request__pack(&ack, buf);
  (void)natsConnection_Publish(w->client->nc, w->ack_subject, buf, (int)len);
  w->last_activity = _nowMs();
}

static void _ack(natcdWatch* w, int64_t watch_id, uint64_t seq) {
  _ackGroup(w, watch_id, seq, false, 0);
}

typedef enum { _kContinue, _kResume, _kEnd } _outcome;

// A bookmark that is no notice for the handler (an offer or a join).
static void _bookmark(natcdWatch* w, const Natcd__V1__WatchResponse* r) {
  const int64_t bookmark = r->header != NULL ? r->header->revision : 0;
  if (bookmark > w->last_rev) w->last_rev = bookmark;
  pthread_mutex_lock(&w->mu);
  if (w->last_rev > w->stats.last_revision) w->stats.last_revision = w->last_rev;
  pthread_mutex_unlock(&w->mu);
}

// Handles an offer or a join on the inbox (r->seq already checked; r is
// freed here). Returns false for a join that does not fit (resume).
static bool _groupControl(natcdWatch* w, Natcd__V1__WatchResponse* r) {
  const bool offer = r->group_subject != NULL && r->group_subject[0] != '\0';
  const int64_t id = r->watch_id;
  const uint64_t seq = r->seq;
  const int64_t group_id = r->group_id;
  bool ok = true;
  bool subscribed = false;
  _bookmark(w, r);
  if (offer) {
    // A new offer replaces an earlier one (its group ended before the join).
    _leaveGroup(w);
    natsSubscription* sub = NULL;
    if (natsConnection_SubscribeSync(&sub, w->client->nc, r->group_subject) == NATS_OK) {
      // The group publishes without a window: what waits here is bounded
      // by the pending limit, past which NATS drops (a gap: resume).
      if (w->group_pending_msgs > 0) {
        (void)natsSubscription_SetPendingLimits(sub, w->group_pending_msgs, -1);
      }
      w->group_sub = sub;
      w->group_id = group_id;
      subscribed = true;
    }
  } else if (w->group_sub != NULL && group_id == w->group_id && !w->joined) {
    w->joined = true;
    w->group_next_seq = r->group_seq;
    pthread_mutex_lock(&w->mu);
    w->stats.group_joins++;
    w->stats.in_group = true;
    pthread_mutex_unlock(&w->mu);
  } else {
    ok = false;  // a join to a group this watch did not subscribe
  }
  protobuf_c_message_free_unpacked(&r->base, NULL);
  if (ok) _ackGroup(w, id, seq, subscribed, subscribed ? group_id : 0);
  return ok;
}

// The event at position i of the complete revision set (fragments, then r).
static const Natcd__V1__Event* _eventAt(natcdWatch* w, const Natcd__V1__WatchResponse* r,
                                        size_t i) {
  for (size_t f = 0; f < w->n_frags; ++f) {
    if (i < w->frags[f]->n_events) return w->frags[f]->events[i];
    i -= w->frags[f]->n_events;
  }
  return i < r->n_events ? r->events[i] : NULL;
}

// Delivers what `r` (with the fragments before it) completes.
static _outcome _deliver(natcdWatch* w, const Natcd__V1__WatchResponse* r) {
  size_t total = r->n_events;
  for (size_t f = 0; f < w->n_frags; ++f) total += w->frags[f]->n_events;
  for (size_t i = 0; i < total; ++i) {
    const Natcd__V1__Event* ev = _eventAt(w, r, i);
    if (ev->kv == NULL) continue;  // malformed; nothing to say
    const int64_t rev = ev->kv->mod_revision;
    const Natcd__V1__Event* next = i + 1 < total ? _eventAt(w, r, i + 1) : NULL;
    const bool last = next == NULL || next->kv == NULL || next->kv->mod_revision != rev;
    if (rev <= w->last_rev) {
      pthread_mutex_lock(&w->mu);
      w->stats.duplicates++;
      pthread_mutex_unlock(&w->mu);
      continue;
    }
    if (_stopped(w)) return _kEnd;
    _arena a = {0};
    natcdKeyValue kv;
    natcdKeyValue prev;
    natcdWatchNotice n;
    memset(&n, 0, sizeof n);
    n.kind = natcdWatchNotice_Event;
    n.revision = rev;
    n.type = ev->type == NATCD__V1__EVENT__EVENT_TYPE__DELETE ? natcdEventType_Delete
                                                              : natcdEventType_Put;
    n.last_in_revision = last;
    bool ok = _kvFromProto(&a, &kv, ev->kv);
    n.kv = &kv;
    if (ok && ev->prev_kv != NULL) {
      ok = _kvFromProto(&a, &prev, ev->prev_kv);
      n.prev_kv = &prev;
    }
    if (!ok) {
      _arenaFree(&a);
      return _kResume;  // out of memory: try again from last_rev + 1
    }
    w->handler(w, &n, w->closure);
    _arenaFree(&a);
    pthread_mutex_lock(&w->mu);
    w->stats.events++;
    if (last) w->stats.last_revision = rev;
    pthread_mutex_unlock(&w->mu);
    if (last) w->last_rev = rev;
  }
  return _kContinue;
}

// Handles one message of the stream (its seq already checked). Takes r.
// A message after a gap in its sequence: counted and dropped (the caller
// resumes from what was delivered).
static void _dropAfterGap(natcdWatch* w, Natcd__V1__WatchResponse* r) {
  pthread_mutex_lock(&w->mu);
  w->stats.gaps++;
  pthread_mutex_unlock(&w->mu);
  protobuf_c_message_free_unpacked(&r->base, NULL);
}

static _outcome _process(natcdWatch* w, Natcd__V1__WatchResponse* r) {
  if (r->fragment && !r->canceled) {
    if (w->n_frags == w->cap_frags) {
      size_t cap = w->cap_frags == 0 ? 4 : 2 * w->cap_frags;
      Natcd__V1__WatchResponse** grown = realloc(w->frags, cap * sizeof *grown);
      if (grown == NULL) {
        protobuf_c_message_free_unpacked(&r->base, NULL);
        return _kResume;
      }
      w->frags = grown;
      w->cap_frags = cap;
    }
    w->frags[w->n_frags++] = r;
    return _kContinue;
  }
  _outcome out = _kContinue;
  if (w->n_frags > 0 && r->n_events == 0) {
    // Fragments of a revision, then no last part (a cancel, or a protocol
    // slip): that revision is incomplete, so none of it is delivered; a
    // resume from last_rev + 1 fetches it whole.
    _freeFrags(w);
    if (!r->canceled) out = _kResume;
  } else if (r->n_events > 0) {
    out = _deliver(w, r);
  } else if (!r->canceled) {
    // A progress notification (or heartbeat): a bookmark.
    const int64_t bookmark = r->header != NULL ? r->header->revision : 0;
    if (bookmark > w->last_rev) w->last_rev = bookmark;
    pthread_mutex_lock(&w->mu);
    if (w->last_rev > w->stats.last_revision) w->stats.last_revision = w->last_rev;
    bool wanted = w->progress_notify || w->progress_wanted > 0;
    if (w->progress_wanted > 0) w->progress_wanted--;
    bool stop = w->stop;
    pthread_mutex_unlock(&w->mu);
    if (wanted && !stop) {
      natcdWatchNotice n;
      memset(&n, 0, sizeof n);
      n.kind = natcdWatchNotice_Progress;
      n.revision = bookmark;
      w->handler(w, &n, w->closure);
    }
  }
  _freeFrags(w);
  if (r->canceled) {
    // natcd has dropped it: nothing to cancel any more.
    pthread_mutex_lock(&w->mu);
    w->watch_id = 0;
    pthread_mutex_unlock(&w->mu);
  }
  if (out == _kContinue && r->canceled) {
    pthread_mutex_lock(&w->mu);
    snprintf(w->stats.last_cancel_reason, sizeof w->stats.last_cancel_reason, "%s",
             r->cancel_reason != NULL ? r->cancel_reason : "");
    pthread_mutex_unlock(&w->mu);
    if (r->compact_revision > 0) {
      _notifyCompacted(w, r->compact_revision);
      if (w->continue_after_compaction) {
        w->last_rev = r->compact_revision - 1;
        out = _kResume;
      } else {
        _end(w);
        out = _kEnd;
      }
    } else {
      pthread_mutex_lock(&w->mu);
      w->stats.server_cancels++;
      pthread_mutex_unlock(&w->mu);
      out = _kResume;
    }
  }
  protobuf_c_message_free_unpacked(&r->base, NULL);
  return out;
}

static void* _watchMain(void* arg) {
  natcdWatch* w = arg;
  bool resume = false;
  for (;;) {
    if (_stopped(w)) break;
    if (resume) {
      if (!_resume(w)) break;
      resume = false;
      continue;
    }
    if (_reconnects(w) != w->reconnects_seen) {
      pthread_mutex_lock(&w->mu);
      w->stats.reconnects++;
      pthread_mutex_unlock(&w->mu);
      resume = true;
      continue;
    }
    // Once joined the stream is the group's; the inbox may still bring a
    // reclaim (checked first, without waiting).
    bool from_group = w->joined;
    if (from_group) {
      int pending = 0;
      if (natsSubscription_GetPending(w->sub, &pending, NULL) == NATS_OK && pending > 0) {
        from_group = false;
      }
    }
    natsMsg* msg = NULL;
    natsStatus ns = natsSubscription_NextMsg(&msg, from_group ? w->group_sub : w->sub, kPollMs);
    if (ns == NATS_TIMEOUT) {
      if (_nowMs() - w->last_activity > kSilentHeartbeats * w->heartbeat_ms) {
        pthread_mutex_lock(&w->mu);
        w->stats.silences++;
        pthread_mutex_unlock(&w->mu);
        resume = true;
      }
      continue;
    }
    if (ns != NATS_OK) {
      // NATS_SLOW_CONSUMER: nats.c dropped messages (a gap); anything else
      // (connection closed...): wait a little and start over.
      if (ns == NATS_SLOW_CONSUMER) {
        pthread_mutex_lock(&w->mu);
        w->stats.gaps++;
        pthread_mutex_unlock(&w->mu);
      } else if (_pause(w, kPollMs)) {
        break;
      }
      resume = true;
      continue;
    }
    w->last_activity = _nowMs();
    Natcd__V1__WatchResponse* r = natcd__v1__watch_response__unpack(
        NULL, (size_t)natsMsg_GetDataLength(msg), (const uint8_t*)natsMsg_GetData(msg));
    natsMsg_Destroy(msg);
    if (r == NULL) {
      resume = true;  // undecodable: trust nothing after it
      continue;
    }
    if (from_group) {
      if (r->group_seq < w->group_next_seq) {
        // Published before the join: the inbox delivered those events.
        protobuf_c_message_free_unpacked(&r->base, NULL);
        continue;
      }
      if (r->group_seq != w->group_next_seq || r->group_id != w->group_id) {
        // NATS dropped group messages (a slow subscriber): resume.
        _dropAfterGap(w, r);
        resume = true;
        continue;
      }
      w->group_next_seq++;
      const uint64_t group_seq = r->group_seq;
      const int64_t group_id = r->group_id;
      // Heartbeats (messages without events) are acknowledged: they keep
      // the watch a member.
      const bool heartbeat = r->n_events == 0 && !r->canceled && !r->fragment;
      pthread_mutex_lock(&w->mu);
      const int64_t id = w->watch_id;
      pthread_mutex_unlock(&w->mu);
      _outcome out = _process(w, r);
      if (heartbeat && out == _kContinue) _ackGroup(w, id, group_seq, false, group_id);
      if (out == _kResume) resume = true;
      if (out == _kEnd) break;
      continue;
    }
    if (r->seq != w->next_seq) {
      // A lost message (or a stranger on our inbox): start over from what
      // was delivered.
      _dropAfterGap(w, r);
      resume = true;
      continue;
    }
    w->next_seq++;
    if (r->group_id != 0 && !r->canceled && r->n_events == 0) {
      if (!_groupControl(w, r)) resume = true;
      continue;
    }
    const uint64_t seq = r->seq;
    const int64_t id = r->watch_id;
    const bool canceled = r->canceled;
    _outcome out = _process(w, r);
    if (!canceled && out != _kEnd) _ack(w, id, seq);
    if (out == _kResume) resume = true;
    if (out == _kEnd) break;
  }
  _detach(w, true);
  _end(w);
  return NULL;
}

static void _free(natcdWatch* w) {
  _detach(w, false);
  free(w->frags);
  natsStatistics_Destroy(w->nstats);
  free(w->key);
  free(w->range_end.data);
  free(w->ack_subject);
  free(w->cancel_subject);
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->mu);
  free(w);
}

static char* _subjectOf(natcdClient* c, const char* suffix) {
  size_t n = strlen(c->prefix) + strlen(suffix) + 2;
  char* s = malloc(n);
  if (s != NULL) snprintf(s, n, "%s.%s", c->prefix, suffix);
  return s;
}

natcdStatus _watchCreate(natcdWatch** out, natcdClient* client, const void* key, size_t key_len,
                         const void* range_end, size_t range_end_len, int64_t start_revision,
                         const natcdWatchOptions* opts, natcdWatchHandler handler, void* closure,
                         bool continue_after_compaction) {
  NATCD_CHECK_ARG(out != NULL);
  NATCD_CHECK_ARG(client != NULL);
  NATCD_CHECK_ARG(key != NULL || key_len == 0);
  NATCD_CHECK_ARG(handler != NULL);
  natcdWatchOptions none;
  if (opts == NULL) {
    memset(&none, 0, sizeof none);
    opts = &none;
  }
  NATCD_CHECK_ARG(range_end == NULL || (!opts->prefix && !opts->from_key));
  *out = NULL;
  natcdWatch* w = calloc(1, sizeof *w);
  if (w == NULL) return _setError(natcdStatus_NoMemory, "out of memory");
  if (pthread_mutex_init(&w->mu, NULL) != 0 || _condInit(&w->cond) != 0) {
    free(w);
    return _setError(natcdStatus_NoMemory, "cannot create a mutex");
  }
  w->client = client;
  w->handler = handler;
  w->closure = closure;
  w->prev_kv = opts->prev_kv;
  w->no_put = opts->no_put;
  w->no_delete = opts->no_delete;
  w->progress_notify = opts->progress_notify;
  w->group = !opts->no_group;
  w->group_pending_msgs = opts->group_pending_msgs;
  w->heartbeat_ms = opts->heartbeat_ms > 0 ? opts->heartbeat_ms : 5000;
  w->continue_after_compaction = continue_after_compaction;
  w->resumed_at = -1;
  w->stall_backoff = client->backoff_ms;
  w->key = malloc(key_len + 1);
  w->ack_subject = _subjectOf(client, "watch.ack");
  w->cancel_subject = _subjectOf(client, "watch.cancel");
  _arena a = {0};
  bool ok = w->key != NULL && w->ack_subject != NULL && w->cancel_subject != NULL &&
            natsStatistics_Create(&w->nstats) == NATS_OK &&
            _rangeEnd(&a, &w->range_end, key, key_len, range_end, range_end_len, opts->prefix,
                      opts->from_key);
  if (ok && w->range_end.len > 0) {
    uint8_t* copy = malloc(w->range_end.len);
    if (copy != NULL) memcpy(copy, w->range_end.data, w->range_end.len);
    w->range_end.data = copy;
    ok = copy != NULL;
  } else {
    w->range_end.data = NULL;
  }
  _arenaFree(&a);
  if (!ok) {
    _free(w);
    return _setError(natcdStatus_NoMemory, "out of memory");
  }
  if (key_len > 0) memcpy(w->key, key, key_len);
  w->key[key_len] = '\0';
  w->key_len = key_len;

  // The first create, with the client's retries (each on a new inbox).
  natcdStatus s = natcdStatus_OK;
  int64_t backoff = client->backoff_ms;
  for (int attempt = 0;; ++attempt) {
    int64_t compact = 0;
    int64_t revision = 0;
    s = _attach(w, start_revision > 0 ? start_revision : 0, &compact, &revision);
    if (s == natcdStatus_OK) {
      w->last_rev = start_revision > 0 ? start_revision - 1 : revision;
      break;
    }
    if (s == natcdStatus_Compacted) break;  // the last error has the compact revision
    if (!_retryable(s) || attempt >= client->retries) break;
    _sleepMs(backoff);
    backoff = backoff * 2 > client->backoff_max_ms ? client->backoff_max_ms : backoff * 2;
  }
  if (s != natcdStatus_OK) {
    _free(w);
    return s;
  }
  w->stats.last_revision = w->last_rev;
  if (pthread_create(&w->thread, NULL, _watchMain, w) != 0) {
    _detach(w, true);
    _free(w);
    return _setError(natcdStatus_NoMemory, "cannot start the watch thread");
  }
  w->started = true;
  *out = w;
  return natcdStatus_OK;
}

natcdStatus natcdWatch_Create(natcdWatch** out, natcdClient* client, const void* key,
                              size_t key_len, const void* range_end, size_t range_end_len,
                              int64_t start_revision, const natcdWatchOptions* opts,
                              natcdWatchHandler handler, void* closure) {
  return _watchCreate(out, client, key, key_len, range_end, range_end_len, start_revision, opts,
                      handler, closure, false);
}

natcdStatus natcdWatch_RequestProgress(natcdWatch* w) {
  NATCD_CHECK_ARG(w != NULL);
  pthread_mutex_lock(&w->mu);
  int64_t id = w->watch_id;
  bool ended = w->stats.ended || w->stop;
  if (!ended && id != 0) w->progress_wanted++;
  pthread_mutex_unlock(&w->mu);
  if (ended) return _setError(natcdStatus_Canceled, "the watch has ended");
  if (id == 0) return _setError(natcdStatus_Unavailable, "the watch is being re-created");
  Natcd__V1__WatchProgressRequest req;
  natcd__v1__watch_progress_request__init(&req);
  req.watch_id = id;
  ProtobufCMessage* reply = NULL;
  natcdStatus s = _request(&reply, w->client, "watch.progress", &req.base,
                           &natcd__v1__watch_response__descriptor, NULL);
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  if (s != natcdStatus_OK) {
    pthread_mutex_lock(&w->mu);
    if (w->progress_wanted > 0) w->progress_wanted--;
    pthread_mutex_unlock(&w->mu);
  }
  return s;
}

natcdStatus natcdWatch_GetStats(natcdWatchStats* stats, natcdWatch* w) {
  NATCD_CHECK_ARG(stats != NULL);
  NATCD_CHECK_ARG(w != NULL);
  pthread_mutex_lock(&w->mu);
  *stats = w->stats;
  pthread_mutex_unlock(&w->mu);
  return natcdStatus_OK;
}

void natcdWatch_Cancel(natcdWatch* w) {
  if (w == NULL) return;
  pthread_mutex_lock(&w->mu);
  w->stop = true;
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->mu);
  if (w->started && !w->thread_joined && !pthread_equal(pthread_self(), w->thread)) {
    pthread_join(w->thread, NULL);
    w->thread_joined = true;
  }
}

void natcdWatch_Destroy(natcdWatch* w) {
  if (w == NULL) return;
  natcdWatch_Cancel(w);
  _free(w);
}
