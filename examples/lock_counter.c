// Distributed lock: increments the shared counter /examples/counter
// <iterations> times, each time reading it, adding one and writing it back
// under the mutex /examples/counter-lock. Run several at once: no increment
// is lost, because only the lock holder does the read-modify-write.
//
// The lock key is attached to this process's session (a lease kept alive
// in the background), so a process that dies holding it releases it when
// its lease expires.
//
// RUN:
//   for i in 1 2 3 4; do NATS_URL=nats://127.0.0.1:4222 example-lock-counter 25 & done; wait
//
// OUTPUT (each process; the last one to finish prints 100):
//   session lease 694d7a1a2b3c4d5e, lock /examples/counter-lock/694d7a1a2b3c4d5e
//   done: 25 increments, counter = 100
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <natcd/client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* kCounter = "/examples/counter";
static const char* kLock = "/examples/counter-lock";

static int fail(const char* what, natcdStatus s) {
  natcdError err;
  natcd_GetLastError(&err);
  fprintf(stderr, "%s: %s (%s)\n", what, natcdStatus_GetText(s), err.text);
  return 1;
}

// counter = counter + 1 (a missing counter counts as 0). Call with the lock held.
static natcdStatus increment(natcdClient* client, int64_t* value) {
  natcdRangeResponse* got = NULL;
  natcdStatus s = natcdKV_Get(&got, client, NATCD_STR(kCounter), NULL);
  if (s != natcdStatus_OK) return s;
  *value = (got->n_kvs == 1 ? strtoll(got->kvs[0].value, NULL, 10) : 0) + 1;
  natcdRangeResponse_Destroy(got);

  char text[32];
  snprintf(text, sizeof text, "%" PRId64, *value);
  return natcdKV_Put(NULL, client, NATCD_STR(kCounter), NATCD_STR(text), NULL);
}

int main(int argc, char** argv) {
  const char* url = getenv("NATS_URL") ? getenv("NATS_URL") : "nats://127.0.0.1:4222";
  int iterations = argc == 2 ? atoi(argv[1]) : 0;
  if (iterations <= 0) {
    fprintf(stderr, "usage: example-lock-counter <iterations>   (NATS_URL selects the server)\n");
    return 2;
  }

  natcdClient* client = NULL;
  natcdSession* session = NULL;
  natcdMutex* mutex = NULL;
  int rc = 0;
  int64_t value = 0;

  natcdStatus s = natcdClient_Connect(&client, url, NULL);
  if (s != natcdStatus_OK) return fail(url, s);
  s = natcdSession_Create(&session, client, 10, NULL, NULL);
  if (s == natcdStatus_OK) s = natcdMutex_Create(&mutex, session, kLock);
  if (s != natcdStatus_OK) {
    rc = fail("session", s);
    goto done;
  }
  printf("session lease %" PRIx64 ", lock %s\n", (uint64_t)natcdSession_Lease(session),
         natcdMutex_Key(mutex, NULL));

  for (int i = 0; i < iterations; i++) {
    s = natcdMutex_Lock(mutex, 30000);
    if (s != natcdStatus_OK) {
      rc = fail("lock", s);
      goto done;
    }
    natcdStatus inc = increment(client, &value);
    s = natcdMutex_Unlock(mutex);
    if (inc != natcdStatus_OK) {
      rc = fail("increment", inc);
      goto done;
    }
    if (s != natcdStatus_OK) {
      rc = fail("unlock", s);
      goto done;
    }
  }
  printf("done: %d increments, counter = %" PRId64 "\n", iterations, value);

done:
  natcdMutex_Destroy(mutex);
  natcdSession_Destroy(session);  // revokes the lease
  natcdClient_Destroy(client);
  nats_Close();
  return rc;
}
