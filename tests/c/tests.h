// The test lists of each file, run by main.c in groups.
#ifndef NATCD_TESTS_C_TESTS_H_
#define NATCD_TESTS_C_TESTS_H_

#include <stddef.h>

struct CMUnitTest;

extern const struct CMUnitTest kv_tests[];
extern const size_t kv_tests_count;
extern const struct CMUnitTest lease_tests[];
extern const size_t lease_tests_count;
extern const struct CMUnitTest watch_tests[];
extern const size_t watch_tests_count;
extern const struct CMUnitTest concurrency_tests[];
extern const size_t concurrency_tests_count;
extern const struct CMUnitTest resilience_tests[];
extern const size_t resilience_tests_count;
extern const struct CMUnitTest maint_tests[];
extern const size_t maint_tests_count;
extern const struct CMUnitTest reader_race_tests[];
extern const size_t reader_race_tests_count;
extern const struct CMUnitTest slow_consumer_tests[];
extern const size_t slow_consumer_tests_count;

// The child process of the killed-lock-holder test (main.c dispatches to it).
int lockHolderMain(int argc, char** argv);

#endif  // NATCD_TESTS_C_TESTS_H_
