// Shared by the C client tests: the running fixture, clients, assertions,
// and a thread-safe recorder of watch notices.
#ifndef NATCD_TESTS_C_COMMON_H_
#define NATCD_TESTS_C_COMMON_H_

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "natcd/client.h"

// The fixture of the running group, and a client connected to it.
extern natcdFixture g_fx;
extern natcdClient* g_client;

// natcd flags every group uses (short timers for tests).
#define TEST_HEARTBEAT_MS 200

// A new client on its own connection to the fixture's NATS (reconnecting
// for ever): timeout 2 s, `retries` retries with backoff 20..200 ms.
natcdClient* test_Connect(const char* prefix, int retries);

// Starts the group's fixture: nats-server, natcd with `natcd_args`
// (NULL-terminated), and g_client.
int test_GroupSetup(const char* const* natcd_args);
int test_GroupTeardown(void);

// Fails the test with the status and natcd_GetLastError() text.
#define ASSERT_OK(call)                                                \
  do {                                                                 \
    natcdStatus _s = (call);                                           \
    if (_s != natcdStatus_OK) {                                        \
      natcdError _e;                                                   \
      natcd_GetLastError(&_e);                                         \
      fail_msg("%s: %s: %s", #call, natcdStatus_GetText(_s), _e.text); \
    }                                                                  \
  } while (0)

#define ASSERT_STATUS(expected, call)                                               \
  do {                                                                              \
    natcdStatus _s = (call);                                                        \
    if (_s != (expected)) {                                                         \
      natcdError _e;                                                                \
      natcd_GetLastError(&_e);                                                      \
      fail_msg("%s: expected %s, got %s: %s", #call, natcdStatus_GetText(expected), \
               natcdStatus_GetText(_s), _s == natcdStatus_OK ? "" : _e.text);       \
    }                                                                               \
  } while (0)

// Polls `cond` every 5 ms for at most timeout_ms; evaluates to its last value.
#define WAIT_FOR(cond, timeout_ms)                                                       \
  ({                                                                                     \
    long long _deadline = natcdFixture_NowMs() + (timeout_ms);                           \
    bool _ok;                                                                            \
    while (!(_ok = (cond)) && natcdFixture_NowMs() < _deadline) natcdFixture_SleepMs(5); \
    _ok;                                                                                 \
  })

// Puts a C-string key/value and returns the revision (fails the test on error).
int64_t test_Put(natcdClient* c, const char* key, const char* value);
// The store's current revision.
int64_t test_Revision(natcdClient* c);
// Keys under a prefix.
int64_t test_Count(natcdClient* c, const char* prefix);

// --- watch notice recorder ---------------------------------------------------

typedef struct recordedNotice {
  natcdWatchNoticeKind kind;
  natcdEventType type;
  int64_t revision;
  int64_t compact_revision;
  bool last_in_revision;
  char key[128];
  char value[128];
  bool has_prev;
  char prev_value[128];
} recordedNotice;

typedef struct recorder {
  pthread_mutex_t mu;
  pthread_cond_t cond;
  recordedNotice* items;
  size_t n;
  size_t cap;
  int sleep_ms;     // the handler sleeps this long per event (a slow consumer)
  bool block;       // the handler waits while this is true
  bool in_handler;  // set while the handler is blocked
  int64_t first_seen_ms;
} recorder;

void recorder_Init(recorder* r);
void recorder_Destroy(recorder* r);
// A natcdWatchHandler; closure = the recorder.
void recorder_Handler(natcdWatch* w, const natcdWatchNotice* n, void* closure);
size_t recorder_Count(recorder* r);
// Number of notices of a kind.
size_t recorder_CountKind(recorder* r, natcdWatchNoticeKind kind);
// Copy of notice i (under the lock).
recordedNotice recorder_At(recorder* r, size_t i);
void recorder_SetBlock(recorder* r, bool block);
bool recorder_Blocked(recorder* r);  // a handler call is waiting on the block

#endif  // NATCD_TESTS_C_COMMON_H_
