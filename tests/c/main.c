// The C client tests: cmocka groups, each against its own nats-server and
// natcd (tests/c/fixture.h). Run by `make check-client`.
//
// `client_tests --lock-holder ...` is the child process of the killed
// lock holder test (concurrency_test.c), not a test run.
#include "common.h"
#include "tests.h"

// Short timers so that the suite stays fast; --max-request-bytes small
// enough for a 413 below NATS's max payload.
#define COMMON_ARGS                                                                        \
  "--lease-ttl-min", "1", "--watch-heartbeat-ms", "200", "--watch-ack-timeout-ms", "3000", \
      "--max-request-bytes", "65536", "--log-level", "warn"

static const char* const kDefaultArgs[] = {COMMON_ARGS, NULL};
static const char* const kSlowConsumerArgs[] = {
    COMMON_ARGS, "--watch-window", "2", "--watch-queue-events", "5", NULL};

static int _setupDefault(void** state) {
  (void)state;
  return test_GroupSetup(kDefaultArgs);
}

static int _setupSlowConsumer(void** state) {
  (void)state;
  return test_GroupSetup(kSlowConsumerArgs);
}

static int _teardown(void** state) {
  (void)state;
  return test_GroupTeardown();
}

typedef struct group {
  const char* name;
  const struct CMUnitTest* tests;
  size_t count;
  CMFixtureFunction setup;
} group;

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "--lock-holder") == 0) return lockHolderMain(argc, argv);
  const group groups[] = {
      {"kv", kv_tests, kv_tests_count, _setupDefault},
      {"lease", lease_tests, lease_tests_count, _setupDefault},
      {"watch", watch_tests, watch_tests_count, _setupDefault},
      {"concurrency", concurrency_tests, concurrency_tests_count, _setupDefault},
      {"resilience", resilience_tests, resilience_tests_count, _setupDefault},
      {"maint", maint_tests, maint_tests_count, _setupDefault},
      {"reader_race", reader_race_tests, reader_race_tests_count, _setupDefault},
      {"slow_consumer", slow_consumer_tests, slow_consumer_tests_count, _setupSlowConsumer},
  };
  // Optional: run only the groups named on the command line.
  int failed = 0;
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; ++i) {
    bool selected = argc < 2;
    for (int a = 1; a < argc; ++a) selected |= strcmp(argv[a], groups[i].name) == 0;
    if (!selected) continue;
    failed += _cmocka_run_group_tests(groups[i].name, groups[i].tests, groups[i].count,
                                      groups[i].setup, _teardown);
  }
  return failed == 0 ? 0 : 1;
}
