// Leader election with failover: candidates campaign under
// /elections/<name>; one leads and works, the others wait their turn. The
// leader's key is attached to its session's lease, so when the leader dies
// (even kill -9) the next candidate leads once that lease expires, within
// --ttl seconds. An observer prints every change of leader.
//
// RUN:
//   NATS_URL=nats://127.0.0.1:4222 example-election jobs --observe &
//   NATS_URL=nats://127.0.0.1:4222 example-election jobs a --ttl 5 &
//   NATS_URL=nats://127.0.0.1:4222 example-election jobs b --ttl 5 &
//
// OUTPUT (then kill -9 the leader "a"):
//   observer:     observed leader: a
//   candidate a:  campaigning as a (lease 694d7a1a2b3c4d5e)
//                 leader: a
//                 a working (1)
//   candidate b:  campaigning as b (lease 694d7a1a2b3c4d61)
//                 leader: b            (at most 5 s after a died)
//   observer:     observed leader: b
//
// Every mode runs until SIGINT or SIGTERM; a candidate stopped that way
// resigns and revokes its session, so the next one leads at once.
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <natcd/client.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop_requested = 0;
static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int fail(const char* what, natcdStatus s) {
  natcdError err;
  natcd_GetLastError(&err);
  fprintf(stderr, "%s: %s (%s)\n", what, natcdStatus_GetText(s), err.text);
  return 1;
}

// Campaigns until leading (or stopped), then works until stopped.
static int candidate(natcdElection* election, natcdSession* session, const char* id) {
  printf("campaigning as %s (lease %" PRIx64 ")\n", id, (uint64_t)natcdSession_Lease(session));
  // Campaign in 1 s slices so that SIGTERM is noticed while waiting (a
  // timed-out campaign withdraws, the next one queues again).
  natcdStatus s = natcdStatus_Timeout;
  while (!stop_requested && s == natcdStatus_Timeout) {
    s = natcdElection_Campaign(election, NATCD_STR(id), 1000);
  }
  if (stop_requested) return 0;
  if (s != natcdStatus_OK) return fail("campaign", s);

  printf("leader: %s\n", id);
  for (int n = 1; !stop_requested; n++) {
    if (natcdSession_IsExpired(session)) {  // natcd unreachable for a whole TTL
      fprintf(stderr, "%s: session expired, leadership lost\n", id);
      return 1;
    }
    if (n % 10 == 1) printf("%s working (%d)\n", id, n / 10 + 1);
    sleep_ms(100);
  }
  s = natcdElection_Resign(election);
  if (s != natcdStatus_OK) return fail("resign", s);
  printf("%s resigned\n", id);
  return 0;
}

// Runs on the observer's thread (and once on the calling thread).
static void on_leader(natcdObserver* o, const natcdKeyValue* leader, void* closure) {
  (void)o;
  (void)closure;
  if (leader != NULL) {
    printf("observed leader: %s\n", leader->value);
  } else {
    printf("observed: no leader\n");
  }
}

static int observe(natcdElection* election) {
  natcdObserver* observer = NULL;
  natcdStatus s = natcdElection_Observe(&observer, election, on_leader, NULL);
  if (s != natcdStatus_OK) return fail("observe", s);
  while (!stop_requested) sleep_ms(100);
  natcdObserver_Destroy(observer);
  return 0;
}

static int usage(void) {
  fprintf(stderr,
          "usage: example-election <name> <candidate-id> [--ttl N]\n"
          "       example-election <name> --observe\n"
          "NATS_URL selects the server (default nats://127.0.0.1:4222).\n");
  return 2;
}

int main(int argc, char** argv) {
  const char* url = getenv("NATS_URL") ? getenv("NATS_URL") : "nats://127.0.0.1:4222";
  if (argc < 3) return usage();
  bool observing = argc == 3 && strcmp(argv[2], "--observe") == 0;
  int64_t ttl = 10;
  if (argc == 5 && strcmp(argv[3], "--ttl") == 0) {
    ttl = atoll(argv[4]);
  } else if (argc != 3) {
    return usage();
  }
  if (ttl <= 0 || (argv[2][0] == '-' && !observing)) return usage();

  setvbuf(stdout, NULL, _IOLBF, 0);
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  char prefix[256];
  snprintf(prefix, sizeof prefix, "/elections/%s", argv[1]);

  natcdClient* client = NULL;
  natcdSession* session = NULL;
  natcdElection* election = NULL;
  int rc;
  natcdStatus s = natcdClient_Connect(&client, url, NULL);
  if (s != natcdStatus_OK) return fail(url, s);
  if (!observing) s = natcdSession_Create(&session, client, ttl, NULL, NULL);
  if (s == natcdStatus_OK) s = natcdElection_Create(&election, client, session, prefix);
  if (s != natcdStatus_OK) {
    rc = fail("election", s);
  } else if (observing) {
    rc = observe(election);
  } else {
    rc = candidate(election, session, argv[2]);
  }
  natcdElection_Destroy(election);
  natcdSession_Destroy(session);  // revokes the lease: no candidacy is left behind
  natcdClient_Destroy(client);
  nats_Close();
  return rc;
}
